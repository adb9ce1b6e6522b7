"""Static statistics of SASS text (cuobjdump -sass), for parity.py.

Standard library only. `analyse(text)` returns one FunctionStats per kernel:
instruction counts by class, the loops, the hot loop and whether the kernel
is warp-specialised. The rules (README.md says the same):

Loops. Basic blocks start at the entry, at every branch target and after
every branch, EXIT or RET. A branch whose target lies at or before it is a
candidate back edge; it is a loop only when its target dominates it (a
natural loop), and the body is every block that reaches the branch without
passing the target. This drops the out-of-line slow paths of barrier waits
(`@!P0 BRA slow` ... `slow: TRYWAIT; BRA back`), which jump backwards into
code that does not dominate them, are not loops, and would otherwise look
like loops spanning half the kernel. Back edges to one header form one loop.

Hot loop. The loop with the most tensor-core instructions; among those, the
one with the fewest instructions (the innermost). Without tensor-core
instructions: the largest loop that contains no other loop. Its size is the
number of its non-NOP instructions, static (each counted once).

Per-MAC size. An unrolled loop has more instructions and more tensor-core
work per trip, so the size is also given per unit of work: instructions per
m16n16k16 of one warp (4096 multiply-adds). A warpgroup MMA (xGMMA MxNxK)
does M/4 x N x K per warp, a warp MMA (xMMA) M x N x K.

Warp specialisation. Yes when the kernel sets its register count with
setmaxnreg (USETMAXREG), which only a kernel whose warpgroups run different
code does; or when its asynchronous global-to-shared loads (UTMALDG, UBLKCP,
LDGSTS) all lie outside the hot loop and inside another loop disjoint from
it (a producer loop beside the consumer's).
"""

import re
from dataclasses import dataclass, field

_LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s*(.*?)\s*;")
_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
_HEX = re.compile(r"0x([0-9a-f]+)")

# Tensor-core opcodes: warpgroup (wgmma) and warp (mma.sync) forms.
WGMMA = ("HGMMA", "QGMMA", "IGMMA", "BGMMA")
MMA = ("HMMA", "QMMA", "IMMA", "DMMA", "BMMA")
ASYNC_LOADS = ("UTMALDG", "UBLKCP", "LDGSTS")
# The classes counted per kernel and per hot loop (opcode base or full name).
COUNTED = ("HGMMA", "QGMMA", "HMMA", "UTMALDG", "LDGSTS", "LDSM", "STSM", "MUFU.EX2", "SHFL",
           "BAR", "SYNCS")
BRANCHES = ("BRA", "JMP", "BRX", "JMX")
ENDS = ("EXIT", "RET", "KILL")
UNIT = 16 * 16 * 16  # one warp's m16n16k16


@dataclass
class Inst:
    addr: int
    pred: str  # "" when unpredicated, else e.g. "P0", "!P0"
    op: str  # full opcode with modifiers, e.g. "HGMMA.64x128x16.F32"
    args: str

    @property
    def base(self):
        return self.op.split(".")[0]

    def is_tc(self):
        return self.base in WGMMA or self.base in MMA

    def counted_as(self):
        """The COUNTED class this instruction falls in, or None."""
        for c in COUNTED:
            if self.op == c or self.op.startswith(c + ".") or self.base == c:
                return c
        return None


def mma_units(inst):
    """Multiply-adds one warp does in this tensor-core instruction, in UNITs."""
    parts = inst.op.split(".")
    if inst.base in WGMMA:
        m = re.fullmatch(r"(\d+)x(\d+)x(\d+)", parts[1]) if len(parts) > 1 else None
        if not m:
            return 0.0
        M, N, K = (int(g) for g in m.groups())
        return M / 4 * N * K / UNIT
    if inst.base in MMA and len(parts) > 1 and parts[1].isdigit():
        s = parts[1]  # 16816 = m16n8k16, 1688 = m16n8k8, 884 = m8n8k4
        M, rest = (16, s[2:]) if s.startswith("16") else (int(s[0]), s[1:])
        N, K = int(rest[0]), int(rest[1:])
        return M * N * K / UNIT
    return 0.0


def parse(text):
    """{function name: [Inst]} of cuobjdump -sass output, in address order."""
    functions, current = {}, None
    for line in text.splitlines():
        m = _FUNCTION.match(line)
        if m:
            current = functions.setdefault(m.group(1), [])
            continue
        m = _LINE.match(line)
        if not m or current is None:
            continue
        body = m.group(2).strip("{} ")
        pred = ""
        if body.startswith("@"):
            pred, _, body = body[1:].partition(" ")
        op, _, args = body.strip().partition(" ")
        current.append(Inst(int(m.group(1), 16), pred, op, args.strip()))
    return functions


def _target(inst):
    if inst.base not in ("BRA", "JMP"):
        return None
    found = _HEX.findall(inst.args)
    return int(found[-1], 16) if found else None


def _conditional(inst):
    return (inst.pred not in ("", "PT")) or inst.op.startswith("BRA.DIV")


def blocks_of(insts):
    """Basic blocks as (list of [first, last] index pairs, successor lists)."""
    index = {i.addr: n for n, i in enumerate(insts)}
    leaders = {0}
    for n, i in enumerate(insts):
        t = _target(i)
        if t is not None and t in index:
            leaders.add(index[t])
        if i.base in BRANCHES or i.base in ENDS:
            leaders.add(n + 1)
    starts = sorted(l for l in leaders if l < len(insts))
    spans = [[s, e - 1] for s, e in zip(starts, starts[1:] + [len(insts)])]
    block_at = {s: b for b, (s, _) in enumerate(spans)}
    succs = []
    for b, (_, last) in enumerate(spans):
        i = insts[last]
        out = []
        t = _target(i)
        if t is not None and t in index:
            out.append(block_at[index[t]])
        ends_flow = (i.base in ("BRA", "JMP") and t is not None) or i.base in ENDS
        if (not ends_flow or _conditional(i)) and b + 1 < len(spans):
            out.append(b + 1)
        succs.append(out)
    return spans, succs


def dominators(succs):
    """dom[b]: the set of blocks that dominate b (None where unreachable)."""
    n = len(succs)
    order, seen, stack = [], {0}, [(0, iter(succs[0]))] if n else []
    while stack:  # reverse post-order
        b, it = stack[-1]
        nxt = next((s for s in it if s not in seen), None)
        if nxt is None:
            order.append(b)
            stack.pop()
        else:
            seen.add(nxt)
            stack.append((nxt, iter(succs[nxt])))
    order.reverse()
    preds = {b: [] for b in order}
    for b in order:
        for s in succs[b]:
            preds[s].append(b)
    dom = [None] * n
    if n:
        dom[0] = {0}
    changed = True
    while changed:
        changed = False
        for b in order[1:]:
            known = [dom[p] for p in preds[b] if dom[p] is not None]
            new = set.intersection(*known) | {b} if known else None
            if new != dom[b]:
                dom[b], changed = new, True
    return dom


def natural_loops(succs):
    """{header block: set of body blocks} of the natural loops."""
    dom = dominators(succs)
    preds = [[] for _ in succs]
    for b, out in enumerate(succs):
        for s in out:
            preds[s].append(b)
    loops = {}
    for u, out in enumerate(succs):
        for h in out:
            if dom[u] is None or h not in dom[u]:
                continue  # not a back edge
            body, work = {h}, []
            if u != h:
                body.add(u)
                work.append(u)
            while work:
                for p in preds[work.pop()]:
                    if p not in body and dom[p] is not None:
                        body.add(p)
                        work.append(p)
            loops.setdefault(h, set()).update(body)
    return loops


@dataclass
class Region:
    """Counts over a set of instructions (a kernel or a loop)."""
    insts: int = 0  # non-NOP
    tc: int = 0
    units: float = 0.0
    counts: dict = field(default_factory=dict)
    first: int = 0  # lowest and highest address, for the reader
    last: int = 0

    @classmethod
    def of(cls, insts):
        r = cls(counts={c: 0 for c in COUNTED})
        addrs = [i.addr for i in insts]
        r.first, r.last = (min(addrs), max(addrs)) if addrs else (0, 0)
        for i in insts:
            if i.op == "NOP":
                continue
            r.insts += 1
            c = i.counted_as()
            if c:
                r.counts[c] += 1
            if i.is_tc():
                r.tc += 1
                r.units += mma_units(i)
        return r

    def per_unit(self):
        return self.insts / self.units if self.units else None


@dataclass
class FunctionStats:
    name: str
    total: Region
    loops: list  # [(Region, set of block ids)]
    hot: Region | None
    setmaxnreg: bool
    maxnreg: tuple  # (raised-to counts, lowered-to counts) of USETMAXREG
    ws: bool
    ws_reason: str


def _has_async_load(insts):
    return any(i.base in ASYNC_LOADS for i in insts)


def function_stats(name, insts):
    spans, succs = blocks_of(insts)

    def members(blocks):
        return [insts[k] for b in sorted(blocks) for k in range(spans[b][0], spans[b][1] + 1)]

    loops = [(Region.of(members(body)), body) for body in natural_loops(succs).values()]
    hot = None
    with_tc = [l for l in loops if l[0].tc]
    if with_tc:
        hot = min(with_tc, key=lambda l: (-l[0].tc, l[0].insts))
    else:
        innermost = [l for l in loops if not any(o[1] < l[1] for o in loops)]
        if innermost:
            hot = max(innermost, key=lambda l: l[0].insts)
    setmaxnreg = any(i.base == "USETMAXREG" for i in insts)
    maxnreg = ([], [])  # USETMAXREG.TRY_ALLOC raises, USETMAXREG.DEALLOC lowers
    for i in insts:
        if i.base == "USETMAXREG" and _HEX.search(i.args):
            n = int(_HEX.findall(i.args)[-1], 16)
            side = maxnreg[1] if "DEALLOC" in i.op.split(".") else maxnreg[0]
            if n not in side:
                side.append(n)
    ws, reason = setmaxnreg, "setmaxnreg" if setmaxnreg else "no"
    if not ws and hot is not None and hot[0].tc and not _has_async_load(members(hot[1])):
        for region, body in loops:
            if not (body & hot[1]) and _has_async_load(members(body)):
                ws, reason = True, "producer loop"
                break
    return FunctionStats(name, Region.of(insts), [l[0] for l in loops],
                         hot[0] if hot else None, setmaxnreg, maxnreg, ws, reason)


def analyse(text):
    """{kernel name: FunctionStats} of cuobjdump -sass output."""
    return {name: function_stats(name, insts) for name, insts in parse(text).items()}


_RES = re.compile(r"Function\s+(\S+):\s*\n\s*(.*)")


def parse_res_usage(text):
    """{kernel: {"REG": n, "STACK": n, "SHARED": n, "LOCAL": n, ...}} of -res-usage."""
    out = {}
    for m in _RES.finditer(text):
        fields = dict(re.findall(r"([A-Z]+(?:\[\d+\])?):(\d+)", m.group(2)))
        out[m.group(1)] = {k: int(v) for k, v in fields.items()}
    return out


_SPILLS = re.compile(r"Function properties for (\S+)\s*\n\s*(\d+) bytes stack frame, "
                     r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def parse_ptxas_spills(log):
    """{kernel: (spill store bytes, spill load bytes)} of a ptxas --verbose log."""
    return {m.group(1): (int(m.group(3)), int(m.group(4))) for m in _SPILLS.finditer(log)}
