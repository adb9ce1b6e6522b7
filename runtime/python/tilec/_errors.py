"""The package's exceptions."""

# absl status codes, as the C API returns them.
STATUS_NAMES = {
    1: "CANCELLED",
    2: "UNKNOWN",
    3: "INVALID_ARGUMENT",
    4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND",
    6: "ALREADY_EXISTS",
    7: "PERMISSION_DENIED",
    8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION",
    10: "ABORTED",
    11: "OUT_OF_RANGE",
    12: "UNIMPLEMENTED",
    13: "INTERNAL",
    14: "UNAVAILABLE",
    15: "DATA_LOSS",
    16: "UNAUTHENTICATED",
}

INVALID_ARGUMENT = 3
NOT_FOUND = 5
PERMISSION_DENIED = 7


class TilecError(Exception):
    """A failure of the runtime (C API) or of an argument given to it.

    code: the absl status code (3 invalid argument, 5 not found, 9 failed
    precondition, 13 internal, ...); message: what went wrong.
    """

    def __init__(self, code, message):
        self.code = int(code)
        self.message = message
        super().__init__("%s: %s" % (STATUS_NAMES.get(self.code, "code %d" % self.code), message))

    @property
    def status_name(self):
        return STATUS_NAMES.get(self.code, str(self.code))


class LibraryNotFound(TilecError):
    """The runtime library or the CLI is nowhere this package looks."""

    def __init__(self, what, looked, hint=""):
        self.what = what
        self.looked = list(looked)
        lines = ["cannot find %s; looked at:" % what]
        lines += ["  " + p for p in self.looked]
        lines.append("set TILEC_BUILD_DIR to a tilec build folder (holding runtime/%s and "
                     "client/tilec)%s" % ("libtilec_runtime.so", ", or " + hint if hint else ""))
        super().__init__(NOT_FOUND, "\n".join(lines))


class CompileError(Exception):
    """`tilec compile` failed.

    stderr: what the CLI printed (the located diagnostic, FILE:LINE:COL:
    error: ...); returncode: its exit status; command: the argument list.
    """

    def __init__(self, returncode, stderr, command, stdout=""):
        self.returncode = returncode
        self.stderr = stderr
        self.stdout = stdout
        self.command = list(command)
        text = stderr.strip() or stdout.strip() or "(no output)"
        super().__init__("tilec compile failed (exit %d):\n%s" % (returncode, text))
