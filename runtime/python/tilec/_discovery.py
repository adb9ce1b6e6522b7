"""Where the runtime library (libtilec_runtime.so) and the tilec CLI are.

Searched in this order, the first that exists wins:

  1. $TILEC_RUNTIME_LIB (the library) / $TILEC_BIN (the CLI): explicit paths;
     when set they are the only candidate, so a wrong setting is an error
     rather than a silent fallback to some other build.
  2. $TILEC_BUILD_DIR: a build folder holding runtime/libtilec_runtime.so and
     client/tilec (also the only candidate when set).
  3. Beside the CLI found on $PATH (or named by $TILEC_BIN), for the library:
     <bin>/../runtime/libtilec_runtime.so (a build tree),
     <bin>/../lib/libtilec_runtime.so (an installed prefix).
  4. <repo>/build when this package is imported from the source tree.

Nothing found is LibraryNotFound listing every place looked at.
"""

import os
import shutil

from ._errors import LibraryNotFound

LIB_NAME = "libtilec_runtime.so"
CLI_NAME = "tilec"


def source_tree_root():
    """The repository root when this file lies in <repo>/runtime/python/tilec."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", "..", ".."))
    if os.path.isfile(os.path.join(root, "runtime", "c_api.h")):
        return root
    return None


def _is_file(path):
    return os.path.isfile(path)


def _is_exe(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _first(candidates, exists, what, explicit_var=None):
    looked = []
    for why, path in candidates:
        looked.append("%s (%s)" % (path, why))
        if exists(path):
            return os.path.abspath(path)
    hint = ("set %s to its path" % explicit_var) if explicit_var else ""
    raise LibraryNotFound(what, looked, hint)


def cli_candidates(env=None, which=shutil.which, source_root="auto"):
    env = os.environ if env is None else env
    if source_root == "auto":
        source_root = source_tree_root()
    if env.get("TILEC_BIN"):
        return [("$TILEC_BIN", env["TILEC_BIN"])]
    if env.get("TILEC_BUILD_DIR"):
        return [("$TILEC_BUILD_DIR", os.path.join(env["TILEC_BUILD_DIR"], "client", CLI_NAME))]
    out = []
    on_path = which(CLI_NAME)
    if on_path:
        out.append(("$PATH", on_path))
    else:
        out.append(("$PATH", "<%s not on $PATH>" % CLI_NAME))
    if source_root:
        out.append(("source tree", os.path.join(source_root, "build", "client", CLI_NAME)))
    else:
        out.append(("source tree", "<the package is not imported from a tilec source tree>"))
    return out


def lib_candidates(env=None, which=shutil.which, source_root="auto"):
    env = os.environ if env is None else env
    if source_root == "auto":
        source_root = source_tree_root()
    if env.get("TILEC_RUNTIME_LIB"):
        return [("$TILEC_RUNTIME_LIB", env["TILEC_RUNTIME_LIB"])]
    if env.get("TILEC_BUILD_DIR"):
        return [("$TILEC_BUILD_DIR",
                 os.path.join(env["TILEC_BUILD_DIR"], "runtime", LIB_NAME))]
    out = []
    bins = []
    if env.get("TILEC_BIN"):
        bins.append(("beside $TILEC_BIN", env["TILEC_BIN"]))
    on_path = which(CLI_NAME)
    if on_path:
        bins.append(("beside tilec on $PATH", os.path.realpath(on_path)))
    elif not bins:
        out.append(("beside the tilec CLI", "<tilec is not on $PATH>"))
    for why, b in bins:
        d = os.path.dirname(os.path.abspath(b))
        out.append((why, os.path.normpath(os.path.join(d, "..", "runtime", LIB_NAME))))
        out.append((why, os.path.normpath(os.path.join(d, "..", "lib", LIB_NAME))))
    if source_root:
        out.append(("source tree", os.path.join(source_root, "build", "runtime", LIB_NAME)))
    else:
        out.append(("source tree", "<the package is not imported from a tilec source tree>"))
    return out


def find_runtime_library(env=None, which=shutil.which, source_root="auto"):
    """The path of libtilec_runtime.so, or LibraryNotFound."""
    return _first(lib_candidates(env, which, source_root), _is_file,
                  "the tilec runtime library (%s)" % LIB_NAME, "TILEC_RUNTIME_LIB")


def find_cli(env=None, which=shutil.which, source_root="auto"):
    """The path of the tilec CLI, or LibraryNotFound."""
    return _first(cli_candidates(env, which, source_root), _is_exe,
                  "the tilec CLI (%s)" % CLI_NAME, "TILEC_BIN")
