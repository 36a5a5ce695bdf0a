"""Prints where this interpreter looks for packages under a prefix, relative to it (cmake
--install runs it to place the hdpsgd package): Debian's python3 reads
/usr/lib/python3/dist-packages and /usr/local/lib/python3.X/dist-packages; a virtual
environment, or any other prefix, lib/python3.X/site-packages."""
import sys

version = "%d.%d" % sys.version_info[:2]
debian = any(p.endswith("dist-packages") for p in sys.path)
prefix = sys.argv[1].rstrip("/")
if debian and prefix == "/usr":
    print("lib/python3/dist-packages")
elif debian and prefix == "/usr/local":
    print("lib/python%s/dist-packages" % version)
else:
    print("lib/python%s/site-packages" % version)
