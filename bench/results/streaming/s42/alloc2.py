import sys, re, collections, subprocess
f, t0, t1 = sys.argv[1], sys.argv[2], sys.argv[3]   # HH:MM:SS window (UTC as printed by jfr)
focus = sys.argv[4] if len(sys.argv) > 4 else None
txt = subprocess.run(["jfr","print","--events","jdk.ObjectAllocationSample","--stack-depth","60",f],capture_output=True,text=True).stdout
evs = txt.split("jdk.ObjectAllocationSample {")[1:]
def size(s):
    m=re.match(r'([\d.]+)\s*(bytes|kB|MB|GB)',s); v=float(m.group(1)); return v*{'bytes':1,'kB':1e3,'MB':1e6,'GB':1e9}[m.group(2)]
by_thread=collections.Counter(); by_ours=collections.Counter(); stacks=collections.Counter(); total=0; n=0
for e in evs:
    m=re.search(r'startTime = (\d\d:\d\d:\d\d)',e)
    if not m or not (t0 <= m.group(1) <= t1): continue
    w=size(re.search(r'weight = ([^\n]+)',e).group(1).strip()); total+=w; n+=1
    th=re.sub(r'\d+','N',(re.search(r'eventThread = "([^"]*)"',e) or [None,'?'])[1] if re.search(r'eventThread = "([^"]*)"',e) else '?')
    by_thread[th[:40]]+=w
    frames=re.findall(r'^\s+([\w$.<>]+)\(',e,re.M)
    ours=[x for x in frames if x.startswith('versioned.')]
    by_ours[ours[0] if ours else 'spark:'+(frames[-1] if frames else '?')]+=w
    if focus and frames and focus in frames[0]: stacks['\n   '.join(frames[:25])]+=w
print(f"window {t0}-{t1}: {total/1e9:.2f} GB in {n} samples")
for name,c in (("thread",by_thread),("first versioned frame (else outermost)",by_ours)):
    print("== by",name)
    for k,v in c.most_common(22): print(f"{v/1e9:7.2f} GB {100*v/total:5.1f}% {k}")
for k,v in stacks.most_common(3): print(f"--- {v/1e9:.2f} GB\n   {k}")
