#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write patterns.txt: 1,200+ payload signatures of the kinds IDS rule sets
carry (protocol banners, scanner user agents, web attack strings, sensitive
paths, shell one-liners, suspicious domains). Deterministic: same output on
every run. Usage: gen_patterns.py [OUT] (default: patterns.txt here)."""
import os
import sys

out = []
seen = set()


def add(p):
    if p and p not in seen and len(p.encode()) <= 128:
        seen.add(p)
        out.append(p)


# Protocol banners and commands (common in any traffic mix).
for p in ["HTTP/1.0", "HTTP/1.1", "GET /", "POST /", "HEAD /", "PUT /",
          "DELETE /", "OPTIONS /", "CONNECT ", "Host: ", "User-Agent: ",
          "Content-Type: ", "Content-Length: ", "Cookie: ", "Set-Cookie: ",
          "Authorization: Basic ", "Authorization: Bearer ", "Referer: ",
          "X-Forwarded-For: ", "Transfer-Encoding: chunked", "Location: ",
          "Server: Apache", "Server: nginx", "Server: Microsoft-IIS",
          "SSH-2.0-", "SSH-1.99-", "220 ", "230 ", "331 ", "530 ", "USER ",
          "PASS ", "RETR ", "STOR ", "LIST", "PASV", "PORT ", "EHLO ",
          "HELO ", "MAIL FROM:", "RCPT TO:", "DATA\r\n", "STARTTLS",
          "AUTH LOGIN", "AUTH PLAIN", "+OK ", "-ERR ", "* OK ", "LOGIN ",
          "SELECT INBOX", "SIP/2.0", "INVITE sip:", "REGISTER sip:",
          "Via: SIP/2.0/UDP", "RTSP/1.0", "M-SEARCH * HTTP/1.1",
          "NOTIFY * HTTP/1.1", "ssdp:discover", "BitTorrent protocol",
          "d1:ad2:id20:", "\\x16\\x03\\x01", "\\x16\\x03\\x03", "SMB",
          "\\xffSMB", "\\xfeSMB", "NTLMSSP", "krbtgt", "PRIVMSG ", "NICK ",
          "JOIN #", "MSEARCH", "Cisco", "public", "private", "GETNEXT"]:
    add(p)

# Scanner and tool user agents, with versions.
tools = {"sqlmap": ["1.%d" % i for i in range(0, 9)],
         "Nikto": ["2.1.%d" % i for i in range(0, 7)],
         "curl": ["7.%d.0" % i for i in range(50, 89)],
         "Wget": ["1.%d" % i for i in range(12, 22)],
         "python-requests": ["2.%d.0" % i for i in range(10, 32)],
         "Go-http-client": ["1.1", "2.0"],
         "masscan": ["1.0", "1.3"], "zgrab": ["0.x"],
         "Nmap Scripting Engine": [""], "WPScan v": ["3.8", "3.7"],
         "DirBuster-": ["1.0-RC1", "0.12"], "gobuster": ["3.1.0", "3.6"],
         "Hydra": ["9.0", "9.4"], "ZmEu": [""], "Morfeus Fucking Scanner": [""],
         "libwww-perl": ["6.%d" % i for i in range(0, 8)],
         "Java": ["1.%d.0_%d" % (v, u) for v in (6, 7, 8) for u in (10, 45)],
         "Apache-HttpClient": ["4.5.%d" % i for i in range(0, 14)],
         "okhttp": ["3.%d.0" % i for i in range(8, 15)],
         "Mozilla": ["4.0 (compatible; MSIE %d.0; Windows NT %s)" % (m, w)
                     for m in (6, 7, 8, 9) for w in ("5.1", "6.0", "6.1")]}
for t, vs in sorted(tools.items()):
    for v in vs:
        add("User-Agent: %s/%s" % (t, v) if v else "User-Agent: %s" % t)

# Web attack strings.
for p in ["' OR '1'='1", "' OR 1=1--", "\" OR \"\"=\"", "UNION SELECT",
          "union all select", "information_schema.tables", "SLEEP(5)",
          "benchmark(10000000", "WAITFOR DELAY '0:0:5'", "xp_cmdshell",
          "@@version", "LOAD_FILE(", "INTO OUTFILE", "<script>",
          "</script>", "javascript:", "onerror=", "onload=", "alert(1)",
          "document.cookie", "String.fromCharCode(", "eval(base64_decode(",
          "${jndi:ldap://", "${jndi:rmi://", "${jndi:dns://", "${env:",
          "() { :; };", "/bin/sh -c", "/bin/bash -i", ";cat /etc/passwd",
          "|id;", "$(whoami)", "`id`", "../../../../", "..%2f..%2f",
          "%2e%2e%2f", "..\\\\..\\\\..\\\\", "php://input", "php://filter",
          "data://text/plain", "expect://", "file:///etc/passwd",
          "<?php", "system($_GET", "passthru(", "shell_exec(",
          "assert($_POST", "eval($_POST", "base64_decode(", "gzinflate(",
          "str_rot13(", "<!ENTITY", "SYSTEM \"file://", "xmlns:xsl",
          "{{7*7}}", "${7*7}", "#{7*7}", "__proto__", "constructor.prototype",
          "ObjectDataProvider", "java.lang.Runtime", "getRuntime().exec(",
          "ProcessBuilder", "rO0AB", "\\xac\\xed\\x00\\x05", "O:8:\"stdClass\"",
          "wp-config.php", "boot.ini", "win.ini", "/proc/self/environ",
          "Content-Type: %{", "%{(#_='multipart/form-data')", "class.module.classLoader",
          "X-Api-Version: ${", "Accept-Language: ${"]:
    add(p)

# Sensitive and commonly probed paths.
dirs = ["", "/admin", "/wp-admin", "/cgi-bin", "/phpmyadmin", "/pma",
        "/myadmin", "/manager", "/console", "/solr", "/jenkins", "/api",
        "/.git", "/.svn", "/backup", "/old", "/test", "/shell", "/uploads"]
files = ["login.php", "admin.php", "config.php", "setup.php", "install.php",
         "shell.php", "cmd.php", "upload.php", "info.php", "phpinfo.php",
         "test.cgi", "php.cgi", "bash", "printenv", "status", "html",
         "config", "HEAD", "index", ".env", "web.config", "server-status"]
for d in dirs:
    for f in files:
        add("%s/%s" % (d, f))
for p in ["/etc/passwd", "/etc/shadow", "/etc/hosts", "/.aws/credentials",
          "/.ssh/id_rsa", "/.ssh/authorized_keys", "/.DS_Store",
          "/wp-login.php", "/xmlrpc.php", "/wp-json/wp/v2/users",
          "/actuator/env", "/actuator/heapdump", "/owa/auth/logon.aspx",
          "/autodiscover/autodiscover.xml", "/remote/login", "/vpn/index.html",
          "/boaform/admin/formLogin", "/HNAP1/", "/GponForm/diag_Form",
          "/setup.cgi?next_file=netgear.cfg", "/shell?cd+/tmp",
          "/cgi-bin/luci", "/tmUnblock.cgi", "/picsdesc.xml",
          "/ctrlt/DeviceUpgrade_1", "/wls-wsat/CoordinatorPortType",
          "/_ignition/execute-solution", "/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php",
          "/index.php?s=/Index/\\\\think\\\\app/invokefunction",
          "/solr/admin/cores?action=", "/jmx-console/", "/invoker/JMXInvokerServlet",
          "/struts2-showcase/", "/nice%20ports%2C/Tri%6Eity.txt%2ebak"]:
    add(p)

# Shell one-liners and post-exploitation tooling.
for p in ["cmd.exe /c", "cmd /c ", "powershell -enc", "powershell.exe -nop",
          "-ExecutionPolicy Bypass", "IEX(New-Object Net.WebClient)",
          "DownloadString(", "Invoke-Mimikatz", "mimikatz", "sekurlsa::logonpasswords",
          "lsadump::sam", "certutil -urlcache -split -f", "bitsadmin /transfer",
          "regsvr32 /s /n /u /i:", "rundll32.exe", "mshta http", "wmic process call create",
          "schtasks /create", "net user /add", "net localgroup administrators",
          "vssadmin delete shadows", "bcdedit /set", "wget http://", "curl -s http://",
          "chmod +x /tmp/", "chmod 777 ", "cd /tmp;", "/dev/tcp/", "nc -e /bin/sh",
          "ncat -e", "socat exec:", "python -c 'import socket", "perl -e 'use Socket",
          "rm -rf /", "busybox wget", "tftp -g -r", "echo -e '\\\\x", "/bin/busybox MIRAI",
          "/bin/busybox ECCHI", "XMRig", "stratum+tcp://", "\"method\": \"mining.subscribe\"",
          "meterpreter", "stdapi_sys_config", "ReflectiveLoader", "beacon.dll",
          "MZ\\x90\\x00\\x03", "This program cannot be run in DOS mode",
          "PK\\x03\\x04", "\\x7fELF", "%PDF-1.", "/JavaScript", "/OpenAction",
          "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "\\x90\\x90\\x90\\x90\\x90\\x90\\x90\\x90",
          "\\xcc\\xcc\\xcc\\xcc"]:
    add(p)

# Suspicious domains: generated names under abused TLDs.
words = ["update", "secure", "login", "account", "verify", "cdn", "static",
         "api", "mail", "cloud", "sync", "support", "billing", "drive",
         "office", "portal", "auth", "pay", "bank", "wallet"]
brands = ["micros0ft", "paypa1", "app1e", "g00gle", "amaz0n", "faceb00k",
          "netf1ix", "dropb0x", "linkedln", "adobee"]
tlds = ["xyz", "top", "club", "online", "site", "icu", "tk", "ru", "cn"]
for i, b in enumerate(brands):
    for j, w in enumerate(words):
        add("%s-%s.%s" % (w, b, tlds[(i + j) % len(tlds)]))
for w in words:
    for t in tlds:
        add("%s%d.%s" % (w, len(w) * 7 % 100, t))
# DNS wire form of a few of them (labels with length bytes).
for b in brands:
    add("\\x%02x%s\\x03com" % (len(b), b))

# SNMP/telnet/IoT default credentials seen in brute forcing.
users = ["root", "admin", "support", "user", "guest", "ubnt", "pi", "oracle"]
pwds = ["admin", "123456", "password", "default", "xc3511", "vizxv",
        "raspberry", "toor", "12345", "1234"]
for u in users:
    for p in pwds:
        add("%s:%s" % (u, p))

if len(out) < 1200:
    sys.exit("only %d patterns" % len(out))
dst = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "patterns.txt")
with open(dst, "w") as f:
    f.write("# gpucap sigmatch example patterns (generated by gen_patterns.py;\n"
            "# one per line, escapes \\xHH \\\\ \\t \\r \\n \\#)\n")
    for p in out:
        f.write(p.replace("\n", "\\n").replace("\r", "\\r") + "\n")
print("%d patterns -> %s" % (len(out), dst))
