"""Tests of sass_stats on small synthetic SASS listings; not part of ctest.

    python3 -m unittest benchmarks/parity/sass_stats_test.py   (repo root)
    python3 -m unittest sass_stats_test                        (this folder)
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sass_stats  # noqa: E402


def listing(name, lines):
    """cuobjdump -sass text of one function; lines are (address, text)."""
    out = ["\tcode for sm_90a", f"\t\tFunction : {name}"]
    for addr, text in lines:
        out.append(f"        /*{addr:04x}*/                   {text} ;"
                   "                 /* 0x000fe20000000800 */")
        out.append("                                                 /* 0x000fe20000000800 */")
    return "\n".join(out) + "\n"


# A warp-specialised GEMM: a producer loop of TMA loads, a consumer k-loop
# of two HGMMA whose barrier wait has an out-of-line slow path that jumps
# back into the loop (not a loop itself), spin loops, and a trap loop.
WS_KERNEL = listing("ws", [
    (0x000, "S2R R0, SR_TID.X"),
    (0x010, "ISETP.GE.AND P0, PT, R0, 0x80, PT"),
    (0x020, "@P0 BRA 0x100"),
    # consumer
    (0x030, "USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xf0"),
    (0x040, "SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR4], R2"),  # k-loop head
    (0x050, "@!P1 BRA 0x180"),
    (0x060, "WARPGROUP.ARRIVE"),
    (0x070, "HGMMA.64x128x16.F32 R24, gdesc[UR8], R24"),
    (0x080, "HGMMA.64x128x16.F32 R24, gdesc[UR12], R24, gsb0"),
    (0x090, "NOP"),
    (0x0a0, "IADD3 R3, R3, 0x1, RZ"),
    (0x0b0, "ISETP.NE.AND P2, PT, R3, 0x80, PT"),
    (0x0c0, "@P2 BRA 0x40"),
    (0x0d0, "EXIT"),
    # producer
    (0x100, "USETMAXREG.DEALLOC.CTAPOOL 0x18"),
    (0x110, "SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR5], R2"),  # producer loop head
    (0x120, "@!P1 BRA 0x110"),  # spin: a second back edge to the loop's head
    (0x130, "UTMALDG.2D [UR8], [UR6], desc[UR12]"),
    (0x140, "IADD3 R4, R4, 0x1, RZ"),
    (0x150, "ISETP.NE.AND P3, PT, R4, 0x80, PT"),
    (0x160, "@P3 BRA 0x110"),
    (0x170, "EXIT"),
    # slow path of the consumer's wait: retries, then returns into the loop
    (0x180, "SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR4], R2"),
    (0x190, "@!P1 BRA 0x180"),
    (0x1a0, "BRA 0x60"),
    (0x1b0, "BRA 0x1b0"),  # trap after the end: unreachable
])


class LoopTest(unittest.TestCase):

    def test_blocks_split_at_branches_and_targets(self):
        insts = sass_stats.parse(WS_KERNEL)["ws"]
        spans, succs = sass_stats.blocks_of(insts)
        starts = [insts[s].addr for s, _ in spans]
        self.assertEqual(starts, [0x000, 0x030, 0x040, 0x060, 0x0d0, 0x100, 0x110, 0x130,
                                  0x170, 0x180, 0x1a0, 0x1b0])
        by_addr = {insts[s].addr: b for b, (s, _) in enumerate(spans)}
        # An unconditional branch has one successor, a conditional one two.
        self.assertEqual(succs[by_addr[0x1a0]], [by_addr[0x060]])
        self.assertEqual(sorted(succs[by_addr[0x040]]), [by_addr[0x060], by_addr[0x180]])
        self.assertEqual(succs[by_addr[0x0d0]], [])  # EXIT

    def test_retry_edge_of_a_slow_path_is_not_a_loop(self):
        stats = sass_stats.analyse(WS_KERNEL)["ws"]
        spans = sorted((r.first, r.last) for r in stats.loops)
        # The k-loop (with its slow path), the producer loop (its spin loop
        # shares its header, so the two are one loop), the slow path's spin.
        self.assertEqual(spans, [(0x040, 0x1a0), (0x110, 0x160), (0x180, 0x190)])

    def test_hot_loop_is_the_tensor_core_loop(self):
        hot = sass_stats.analyse(WS_KERNEL)["ws"].hot
        self.assertEqual((hot.first, hot.last), (0x040, 0x1a0))
        self.assertEqual(hot.tc, 2)
        # 0x40..0xc0 and 0x180..0x1a0 less the NOP.
        self.assertEqual(hot.insts, 8 + 3)
        self.assertEqual(hot.units, 2 * 16 * 128 * 16 / 4096)
        self.assertAlmostEqual(hot.per_unit(), 11 / 16)

    def test_innermost_loop_wins_a_tie(self):
        text = listing("nest", [
            (0x00, "MOV R1, RZ"),
            (0x10, "MOV R2, RZ"),  # outer head
            (0x20, "HMMA.16816.F32 R4, R8, R12, R4"),  # inner head
            (0x30, "@P0 BRA 0x20"),
            (0x40, "IADD3 R1, R1, 0x1, RZ"),
            (0x50, "@P1 BRA 0x10"),
            (0x60, "EXIT"),
        ])
        stats = sass_stats.analyse(text)["nest"]
        self.assertEqual(len(stats.loops), 2)
        self.assertEqual((stats.hot.first, stats.hot.last), (0x20, 0x30))
        self.assertEqual(stats.hot.units, 16 * 8 * 16 / 4096)

    def test_without_tensor_cores_the_largest_innermost_loop(self):
        text = listing("rows", [
            (0x00, "MOV R1, RZ"),
            (0x10, "FADD R2, R2, R3"),
            (0x20, "FADD R2, R2, R4"),
            (0x30, "@P0 BRA 0x10"),
            (0x40, "SHFL.BFLY PT, R5, R2, 0x1, 0x1f"),
            (0x50, "@P1 BRA 0x50"),
            (0x60, "EXIT"),
        ])
        hot = sass_stats.analyse(text)["rows"].hot
        self.assertEqual((hot.first, hot.last, hot.insts), (0x10, 0x30, 3))


class WarpSpecialisationTest(unittest.TestCase):

    def test_setmaxnreg(self):
        stats = sass_stats.analyse(WS_KERNEL)["ws"]
        self.assertTrue(stats.ws)
        self.assertEqual(stats.ws_reason, "setmaxnreg")
        self.assertEqual(stats.maxnreg, ([0xf0], [0x18]))

    def test_producer_loop_without_setmaxnreg(self):
        text = WS_KERNEL.replace("USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xf0", "MOV R9, RZ")
        text = text.replace("USETMAXREG.DEALLOC.CTAPOOL 0x18", "MOV R9, RZ")
        stats = sass_stats.analyse(text)["ws"]
        self.assertEqual((stats.ws, stats.ws_reason), (True, "producer loop"))

    def test_loads_inside_the_tensor_core_loop(self):
        text = listing("pipe", [
            (0x00, "MOV R1, RZ"),
            (0x10, "UTMALDG.2D [UR8], [UR6], desc[UR12]"),
            (0x20, "HGMMA.64x64x16.F32 R24, gdesc[UR8], R24"),
            (0x30, "@P0 BRA 0x10"),
            (0x40, "EXIT"),
        ])
        stats = sass_stats.analyse(text)["pipe"]
        self.assertEqual((stats.ws, stats.ws_reason), (False, "no"))


class ParseTest(unittest.TestCase):

    def test_mma_units(self):
        def units(op):
            return sass_stats.mma_units(sass_stats.Inst(0, "", op, ""))

        self.assertEqual(units("HGMMA.64x256x16.F32"), 16 * 256 * 16 / 4096)
        self.assertEqual(units("QGMMA.64x128x32.F32.E4M3.E4M3"), 16 * 128 * 32 / 4096)
        self.assertEqual(units("HMMA.1688.F32"), 16 * 8 * 8 / 4096)
        self.assertEqual(units("DMMA.884"), 8 * 8 * 4 / 4096)

    def test_res_usage_and_spills(self):
        res = (" Function main_kernel:\n  REG:240 STACK:0 SHARED:2048 LOCAL:8 "
               "CONSTANT[0]:1024 TEXTURE:0\n")
        self.assertEqual(sass_stats.parse_res_usage(res)["main_kernel"]["REG"], 240)
        self.assertEqual(sass_stats.parse_res_usage(res)["main_kernel"]["LOCAL"], 8)
        log = ("ptxas info    : Function properties for main_kernel\n"
               "    0 bytes stack frame, 12 bytes spill stores, 16 bytes spill loads\n")
        self.assertEqual(sass_stats.parse_ptxas_spills(log), {"main_kernel": (12, 16)})


if __name__ == "__main__":
    unittest.main()
