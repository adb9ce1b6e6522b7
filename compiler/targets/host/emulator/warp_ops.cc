#include "compiler/targets/host/emulator/warp_ops.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/device/host/tl/abi.h"
#include "compiler/device/host/tl/types.h"

namespace tilec::host {
namespace {

using tl::host::LdmatrixIn;
using tl::host::MfmaIn;
using tl::host::MmaIn;
using tl::host::ShflIn;
using tl::host::StmatrixIn;

template <typename T>
const T& In(const LaneOperands& lane) {
  return *static_cast<const T*>(lane.in);
}

template <typename T>
T* Out(const LaneOperands& lane) {
  return static_cast<T*>(lane.out);
}

// shfl.sync.{bfly,idx}.b32 d, a, b, 0x1f, 0xffffffff: lane l reads lane j,
// j = l ^ b (bfly) or b (idx), b taken modulo the warp size.
absl::Status Shuffle(bool bfly, absl::Span<const LaneOperands> lanes, int warp_size) {
  const int n = static_cast<int>(lanes.size());
  const uint32_t mask = static_cast<uint32_t>(warp_size - 1);
  // Read every source before writing any result: `out` may alias no `in`, but
  // keep the semantics independent of the order lanes are visited in.
  uint32_t values[64];
  for (int l = 0; l < n; ++l) values[l] = In<ShflIn>(lanes[l]).value;
  for (int l = 0; l < n; ++l) {
    const uint32_t b = static_cast<uint32_t>(In<ShflIn>(lanes[l]).lane) & mask;
    const uint32_t j = bfly ? (static_cast<uint32_t>(l) ^ b) : b;
    if (j >= static_cast<uint32_t>(n)) {
      return absl::FailedPreconditionError(absl::StrCat(bfly ? "shfl_xor" : "shfl_sync", ": lane ",
                                                        l, " reads lane ", j, ", which this ", n,
                                                        "-lane warp does not have"));
    }
    *Out<uint32_t>(lanes[l]) = values[j];
  }
  return absl::OkStatus();
}

absl::Status Ldmatrix(absl::Span<const LaneOperands> lanes, const SharedWindow& smem) {
  const LdmatrixIn& first = In<LdmatrixIn>(lanes[0]);
  const int num = first.num;
  if (num != 1 && num != 2 && num != 4) {
    return absl::FailedPreconditionError(
        absl::StrCat("ldmatrix: lane 0 asks for ", num, " matrices (1, 2 or 4)"));
  }
  for (int l = 1; l < 32; ++l) {
    const LdmatrixIn& in = In<LdmatrixIn>(lanes[l]);
    if (in.num != num || in.trans != first.trans) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "ldmatrix: lane %d executes ldmatrix_x%d%s while lane 0 executes ldmatrix_x%d%s", l,
          in.num, in.trans ? "_trans" : "", num, first.trans ? "_trans" : ""));
    }
  }
  // rows[m][r][c]: element (r, c) of matrix m, read from lane (8 m + r)'s row.
  uint16_t rows[4][8][8];
  for (int m = 0; m < num; ++m) {
    for (int r = 0; r < 8; ++r) {
      const int l = m * 8 + r;
      const auto* p = static_cast<const uint8_t*>(In<LdmatrixIn>(lanes[l]).row);
      const bool inside = p >= smem.base && p + 16 <= smem.base + smem.bytes;
      if (!inside) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "ldmatrix: lane %d's row address %p (row %d of matrix %d) is outside the block's "
            "dynamic shared memory [%p, +%d bytes)",
            l, p, r, m, smem.base, smem.bytes));
      }
      const uint64_t offset = static_cast<uint64_t>(p - smem.base);
      if (offset % 16 != 0) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "ldmatrix: lane %d's row address is at shared offset %d, not 16-byte aligned", l,
            offset));
      }
      std::memcpy(rows[m][r], p, 16);
    }
  }
  for (int l = 0; l < 32; ++l) {
    uint32_t* out = Out<uint32_t>(lanes[l]);
    const int a = l / 4, b = 2 * (l % 4);
    for (int m = 0; m < num; ++m) {
      const uint16_t lo = first.trans ? rows[m][b][a] : rows[m][a][b];
      const uint16_t hi = first.trans ? rows[m][b + 1][a] : rows[m][a][b + 1];
      out[m] = static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
    }
  }
  return absl::OkStatus();
}

// The inverse of Ldmatrix: row r of matrix m (the address lane 8 m + r
// supplies) receives element (r, c) of matrix m, which lane 4 r + c / 2 holds
// in register m (half c % 2); with .trans, element (c, r) of the registers'
// matrix, from lane 4 c + r / 2. All rows are checked before any is written.
absl::Status Stmatrix(absl::Span<const LaneOperands> lanes, const SharedWindow& smem) {
  const StmatrixIn& first = In<StmatrixIn>(lanes[0]);
  const int num = first.num;
  if (num != 1 && num != 2 && num != 4) {
    return absl::FailedPreconditionError(
        absl::StrCat("stmatrix: lane 0 stores ", num, " matrices (1, 2 or 4)"));
  }
  for (int l = 1; l < 32; ++l) {
    const StmatrixIn& in = In<StmatrixIn>(lanes[l]);
    if (in.num != num || in.trans != first.trans) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "stmatrix: lane %d executes stmatrix_x%d%s while lane 0 executes stmatrix_x%d%s", l,
          in.num, in.trans ? "_trans" : "", num, first.trans ? "_trans" : ""));
    }
  }
  for (int l = 0; l < 8 * num; ++l) {
    const auto* p = static_cast<const uint8_t*>(In<StmatrixIn>(lanes[l]).row);
    const bool inside = p >= smem.base && p + 16 <= smem.base + smem.bytes;
    if (!inside) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "stmatrix: lane %d's row address %p (row %d of matrix %d) is outside the block's "
          "dynamic shared memory [%p, +%d bytes)",
          l, p, l % 8, l / 8, smem.base, smem.bytes));
    }
    const uint64_t offset = static_cast<uint64_t>(p - smem.base);
    if (offset % 16 != 0) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "stmatrix: lane %d's row address is at shared offset %d, not 16-byte aligned", l,
          offset));
    }
  }
  // element(m, r, c): element (r, c) of matrix m as the registers hold it.
  auto element = [&](int m, int r, int c) {
    const uint32_t reg = In<StmatrixIn>(lanes[4 * r + c / 2]).r[m];
    return static_cast<uint16_t>(c % 2 == 0 ? reg : reg >> 16);
  };
  for (int m = 0; m < num; ++m) {
    for (int r = 0; r < 8; ++r) {
      uint16_t row[8];
      for (int c = 0; c < 8; ++c) row[c] = first.trans ? element(m, c, r) : element(m, r, c);
      std::memcpy(In<StmatrixIn>(lanes[8 * m + r]).row, row, 16);
    }
  }
  return absl::OkStatus();
}

float Decode16(uint16_t bits, int32_t kind) {
  return kind == tl::host::kMmaM16N8K16F16F32 ? float(tl::half_t::from_bits(bits))
                                              : float(tl::bfloat16_t::from_bits(bits));
}

absl::Status Mma(absl::Span<const LaneOperands> lanes) {
  const int32_t kind = In<MmaIn>(lanes[0]).kind;
  if (kind != tl::host::kMmaM16N8K16F16F32 && kind != tl::host::kMmaM16N8K16Bf16F32) {
    return absl::FailedPreconditionError(absl::StrCat("mma: unknown variant ", kind));
  }
  float a[16][16], b[16][8], c[16][8];
  for (int l = 0; l < 32; ++l) {
    const MmaIn& in = In<MmaIn>(lanes[l]);
    if (in.kind != kind) {
      return absl::FailedPreconditionError(absl::StrCat("mma: lane ", l,
                                                        " executes a different mma variant (",
                                                        in.kind, ") than lane 0 (", kind, ")"));
    }
    const int g = l >> 2, q = l & 3;
    // A (row major 16x16): a0 (g, 2q..), a1 (g+8, 2q..), a2 (g, 2q+8..),
    // a3 (g+8, 2q+8..); the lower column in the low half.
    for (int r = 0; r < 4; ++r) {
      const int row = g + (r & 1) * 8;
      const int col = 2 * q + (r >> 1) * 8;
      a[row][col] = Decode16(static_cast<uint16_t>(in.a[r]), kind);
      a[row][col + 1] = Decode16(static_cast<uint16_t>(in.a[r] >> 16), kind);
    }
    // B (16x8, column major): b0 (k = 2q..2q+1, n = g), b1 (k = 2q+8.., n = g).
    for (int r = 0; r < 2; ++r) {
      const int k = 2 * q + r * 8;
      b[k][g] = Decode16(static_cast<uint16_t>(in.b[r]), kind);
      b[k + 1][g] = Decode16(static_cast<uint16_t>(in.b[r] >> 16), kind);
    }
    // C (16x8): c0, c1 (g, 2q..2q+1); c2, c3 (g+8, 2q..2q+1).
    c[g][2 * q] = in.c[0];
    c[g][2 * q + 1] = in.c[1];
    c[g + 8][2 * q] = in.c[2];
    c[g + 8][2 * q + 1] = in.c[3];
  }
  float d[16][8];
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 8; ++j) {
      float acc = c[i][j];
      for (int k = 0; k < 16; ++k) acc += a[i][k] * b[k][j];  // exact products
      d[i][j] = acc;
    }
  }
  for (int l = 0; l < 32; ++l) {
    const int g = l >> 2, q = l & 3;
    float* out = Out<float>(lanes[l]);
    out[0] = d[g][2 * q];
    out[1] = d[g][2 * q + 1];
    out[2] = d[g + 8][2 * q];
    out[3] = d[g + 8][2 * q + 1];
  }
  return absl::OkStatus();
}

// v_mfma over 64 lanes (AMD's matrix-core lane tables, tile T = 32 or 16,
// V = 4 values per lane for the 16-bit types or 8 for float8, k-step KS =
// V * 64 / T): A(i, k) is element k % V of lane i + T * (k / V), B(k, j)
// element k % V of lane j + T * (k / V); D register r of lane l is row
// 8 * (r / 4) + 4 * (l / 32) + r % 4 (T = 32) or 4 * (l / 16) + r (T = 16),
// column l % T. Products are exact in float; each result sums k = 0..KS-1 in
// order onto c.
absl::Status Mfma(absl::Span<const LaneOperands> lanes) {
  const MfmaIn& first = In<MfmaIn>(lanes[0]);
  const int32_t T = first.tile, at = first.a_type, bt = first.b_type;
  auto known = [](int32_t t) { return t >= tl::host::kMfmaF16 && t <= tl::host::kMfmaBf8; };
  auto eight_bit = [](int32_t t) { return t >= tl::host::kMfmaFp8; };
  if ((T != 32 && T != 16) || !known(at) || !known(bt) || eight_bit(at) != eight_bit(bt)) {
    return absl::FailedPreconditionError(
        absl::StrCat("mfma: unknown variant (tile ", T, ", types ", at, " x ", bt, ")"));
  }
  const int V = eight_bit(at) ? 8 : 4, KS = V * 64 / T, R = T * T / 64;
  auto decode = [](int32_t type, uint16_t bits) -> float {
    switch (type) {
      case tl::host::kMfmaF16: return float(tl::half_t::from_bits(bits));
      case tl::host::kMfmaBf16: return float(tl::bfloat16_t::from_bits(bits));
      case tl::host::kMfmaFp8: return float(tl::fp8_e4m3fnuz_t::from_bits(uint8_t(bits)));
      default: return float(tl::fp8_e5m2fnuz_t::from_bits(uint8_t(bits)));
    }
  };
  auto row_of = [&](int l, int r) { return T == 32 ? 8 * (r / 4) + 4 * (l / 32) + r % 4 : 4 * (l / 16) + r; };
  float a[32][32], b[32][32], c[32][32];
  for (int l = 0; l < 64; ++l) {
    const MfmaIn& in = In<MfmaIn>(lanes[l]);
    if (in.tile != T || in.a_type != at || in.b_type != bt) {
      return absl::FailedPreconditionError(
          absl::StrCat("mfma: lane ", l, " executes a different mfma variant (tile ", in.tile,
                       ", types ", in.a_type, " x ", in.b_type, ") than lane 0 (tile ", T,
                       ", types ", at, " x ", bt, ")"));
    }
    for (int j = 0; j < V; ++j) {
      const int k = V * (l / T) + j;
      a[l % T][k] = decode(at, in.a[j]);
      b[k][l % T] = decode(bt, in.b[j]);
    }
    for (int r = 0; r < R; ++r) c[row_of(l, r)][l % T] = in.c[r];
  }
  for (int l = 0; l < 64; ++l) {
    float* out = Out<float>(lanes[l]);
    for (int r = 0; r < R; ++r) {
      const int i = row_of(l, r), j = l % T;
      float acc = c[i][j];
      for (int k = 0; k < KS; ++k) acc += a[i][k] * b[k][j];  // exact products
      out[r] = acc;
    }
  }
  return absl::OkStatus();
}

}  // namespace

const char* WarpOpName(uint32_t op) {
  switch (op) {
    case tl::host::kWarpShflBfly: return "shfl_xor";
    case tl::host::kWarpShflIdx: return "shfl_sync";
    case tl::host::kWarpLdmatrix: return "ldmatrix";
    case tl::host::kWarpMma: return "mma";
    case tl::host::kWarpStmatrix: return "stmatrix";
    case tl::host::kWarpMfma: return "mfma";
    default: return "an unknown warp collective";
  }
}

absl::Status ExecuteWarpOp(uint32_t op, absl::Span<const LaneOperands> lanes, int warp_size,
                           const SharedWindow& smem) {
  if (lanes.empty() || static_cast<int>(lanes.size()) > warp_size || warp_size > 64) {
    return absl::InternalError(absl::StrCat("emulator bug: warp collective over ", lanes.size(),
                                            " lanes with warp size ", warp_size));
  }
  switch (op) {
    case tl::host::kWarpShflBfly:
    case tl::host::kWarpShflIdx: return Shuffle(op == tl::host::kWarpShflBfly, lanes, warp_size);
    case tl::host::kWarpLdmatrix:
    case tl::host::kWarpStmatrix:
    case tl::host::kWarpMma:
      if (warp_size != 32 || lanes.size() != 32) {
        return absl::FailedPreconditionError(
            absl::StrCat(WarpOpName(op), " needs a full 32-lane warp; this warp has ", lanes.size(),
                         " lanes (warp size ", warp_size, ")"));
      }
      if (op == tl::host::kWarpLdmatrix) return Ldmatrix(lanes, smem);
      if (op == tl::host::kWarpStmatrix) return Stmatrix(lanes, smem);
      return Mma(lanes);
    case tl::host::kWarpMfma:
      if (warp_size != 64 || lanes.size() != 64) {
        return absl::FailedPreconditionError(
            absl::StrCat("mfma needs a full 64-lane wavefront; this wave has ", lanes.size(),
                         " lanes (wave size ", warp_size, ")"));
      }
      return Mfma(lanes);
    default:
      return absl::FailedPreconditionError(
          absl::StrCat("unknown warp collective ", op, " (device library / runtime mismatch)"));
  }
}

}  // namespace tilec::host
