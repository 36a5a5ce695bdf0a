"""Build hook of `pip install ./python`: finds or builds libhdpsgd and writes the package's
_config.py (see pyproject.toml). Nothing here runs at import time."""
import os
import re
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)


def _version():
    with open(os.path.join(TOP, "CMakeLists.txt")) as f:
        m = re.search(r"project\(hdpsgd VERSION ([0-9.]+)", f.read())
    if not m:
        raise RuntimeError("hdpsgd: no version in CMakeLists.txt")
    return m.group(1)


def _installed_library():
    """libhdpsgd.so.N of an installed hdpsgd (pkg-config), or None."""
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "hdpsgd"], capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    for name in sorted(os.listdir(libdir)) if os.path.isdir(libdir) else []:
        if re.fullmatch(r"libhdpsgd\.so\.\d+", name):
            return os.path.join(libdir, name)
    return None


def _built_library(build_dir):
    path = os.path.join(build_dir, "libhdpsgd.so")
    return os.path.realpath(path) if os.path.exists(path) else None


def _build_library(build_temp):
    """libhdpsgd built from this source tree (Release, without the tests)."""
    if not os.path.exists(os.path.join(TOP, "CMakeLists.txt")):
        raise RuntimeError("hdpsgd: no libhdpsgd found and no source tree to build it from: set "
                           "HDPSGD_LIBRARY to a libhdpsgd.so or HDPSGD_BUILD_DIR to a CMake build")
    build = os.path.join(os.path.abspath(build_temp), "libhdpsgd-build")
    cmake = shutil.which("cmake")
    if not cmake:
        raise RuntimeError("hdpsgd: building libhdpsgd needs cmake (run scripts/install-deps.sh)")
    subprocess.run([cmake, "-S", TOP, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF"],
                   check=True)
    subprocess.run([cmake, "--build", build, "--target", "hdpsgd_shared", "-j", str(os.cpu_count() or 2)],
                   check=True)
    return _built_library(build)


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        pkg = os.path.join(self.build_lib, "hdpsgd")
        library = ""  # empty: the copy inside the package
        given = os.environ.get("HDPSGD_LIBRARY")
        if given:
            if not os.path.exists(given):
                raise RuntimeError(f"hdpsgd: HDPSGD_LIBRARY={given!r}: no such file")
            library = os.path.abspath(given)
        else:
            found = None
            if os.environ.get("HDPSGD_BUILD_DIR"):
                found = _built_library(os.environ["HDPSGD_BUILD_DIR"])
                if not found:
                    raise RuntimeError("hdpsgd: HDPSGD_BUILD_DIR has no libhdpsgd.so")
            found = found or _installed_library()
            if found:
                library = found
            else:
                built = _build_library(self.get_finalized_command("build").build_temp)
                shutil.copy2(built, os.path.join(pkg, "libhdpsgd.so"))
        with open(os.path.join(pkg, "_config.py"), "w") as f:
            f.write("# Written by setup.py (pip install): where this copy of the package finds "
                    "libhdpsgd.so;\n# empty: the copy inside the package. HDPSGD_LIBRARY in the "
                    "environment overrides it.\n")
            f.write(f"LIBRARY = {library!r}\nVERSION = {_version()!r}\n")


setup(version=_version(), cmdclass={"build_py": BuildPyWithLibrary})
