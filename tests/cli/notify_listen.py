#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Listen on a systemd notify socket while a command runs.

notify_listen.py SOCKET LOG CMD...: binds SOCKET (AF_UNIX datagrams, as
systemd's), runs CMD with NOTIFY_SOCKET=SOCKET, and writes each message
it receives to LOG, one variable a line, as "SECONDS PID VAR=VALUE"
(seconds since CMD started). The socket is writable by every user, as
systemd's is, so that a process that dropped to another user still
reaches it. Exits with CMD's status.
"""
import os
import select
import socket
import subprocess
import sys
import time


def main():
    path, log, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    # as systemd's: a process that dropped its privileges still sends
    os.chmod(path, 0o777)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    env = dict(os.environ, NOTIFY_SOCKET=path)
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, env=env)
    with open(log, "w") as out:
        while True:
            done = proc.poll() is not None
            r, _, _ = select.select([sock], [], [], 0.05)
            if r:
                msg, anc, _, _ = sock.recvmsg(4096, socket.CMSG_SPACE(12))
                pid = 0
                for level, kind, data in anc:
                    if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                        pid = int.from_bytes(data[0:4], sys.byteorder)
                for line in msg.decode(errors="replace").splitlines():
                    out.write("%.3f %d %s\n" % (time.monotonic() - t0, pid, line))
                out.flush()
            elif done:
                break
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
