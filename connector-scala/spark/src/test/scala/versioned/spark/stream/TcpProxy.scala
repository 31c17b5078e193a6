package versioned.spark.stream

import java.io.IOException
import java.net.{InetAddress, ServerSocket, Socket}
import java.util.concurrent.ConcurrentLinkedQueue

/**
 * A TCP proxy on 127.0.0.1 to `host:port` that a test can take down (its open connections are cut and new
 * ones are closed as soon as they are accepted: a server that is down) and bring up again.
 */
final class TcpProxy(host: String, port: Int) extends AutoCloseable {
  private val server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress)
  val localPort: Int = server.getLocalPort
  @volatile private var up = true
  private val open = new ConcurrentLinkedQueue[Socket]()

  private def daemon(name: String)(body: => Unit): Unit = {
    val t = new Thread(() => body, name); t.setDaemon(true); t.start()
  }

  private def quietly(s: Socket): Unit = try s.close() catch { case _: IOException => () }

  private def pipe(from: Socket, to: Socket): Unit = daemon("tcp-proxy-pipe") {
    val buf = new Array[Byte](64 * 1024)
    try {
      val (in, out) = (from.getInputStream, to.getOutputStream)
      var n = in.read(buf)
      while (n >= 0) { out.write(buf, 0, n); out.flush(); n = in.read(buf) }
    } catch { case _: IOException => () } finally { quietly(from); quietly(to) }
  }

  daemon("tcp-proxy-accept") {
    while (!server.isClosed) {
      try {
        val client = server.accept()
        if (!up) quietly(client)
        else {
          val target = new Socket(host, port)
          open.add(client); open.add(target)
          pipe(client, target); pipe(target, client)
        }
      } catch { case _: IOException => () }
    }
  }

  /** Cuts every open connection and refuses new ones until [[restore]]. */
  def down(): Unit = { up = false; while (!open.isEmpty) Option(open.poll()).foreach(quietly) }

  def restore(): Unit = up = true

  override def close(): Unit = { server.close(); down() }
}
