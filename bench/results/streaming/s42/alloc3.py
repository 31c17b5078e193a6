import sys, re, collections, subprocess
f, t0, t1, thr = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
depth=int(sys.argv[5]) if len(sys.argv)>5 else 8
txt = subprocess.run(["jfr","print","--events","jdk.ObjectAllocationSample","--stack-depth","80",f],capture_output=True,text=True).stdout
evs = txt.split("jdk.ObjectAllocationSample {")[1:]
def size(s):
    m=re.match(r'([\d.]+)\s*(bytes|kB|MB|GB)',s); v=float(m.group(1)); return v*{'bytes':1,'kB':1e3,'MB':1e6,'GB':1e9}[m.group(2)]
c=collections.Counter(); total=0
for e in evs:
    m=re.search(r'startTime = (\d\d:\d\d:\d\d)',e)
    if not m or not (t0 <= m.group(1) <= t1): continue
    t=re.search(r'eventThread = "([^"]*)"',e)
    if not t or thr not in t.group(1): continue
    w=size(re.search(r'weight = ([^\n]+)',e).group(1).strip()); total+=w
    frames=re.findall(r'^\s+([\w$.<>]+)\(',e,re.M)
    # key: top frame + first 'depth' interesting frames (versioned or spark sql)
    interesting=[x for x in frames if x.startswith('versioned.') or 'spark.sql' in x or 'parquet' in x or 'broadcast' in x.lower()]
    c[(frames[0] if frames else '?')+'  <=  '+' < '.join(x.split('.')[-2]+'.'+x.split('.')[-1] for x in interesting[:depth])]+=w
print(f"{thr}: {total/1e9:.2f} GB")
for k,v in c.most_common(25): print(f"{v/1e9:6.2f} GB {100*v/total:5.1f}% {k[:400]}")
