#include "tests/reference/reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

namespace tilec::reference {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

[[noreturn]] void Fail(const char* fn, const char* what) {
  std::fprintf(stderr, "tilec reference %s: %s\n", fn, what);
  std::abort();
}

void CheckSize(const char* fn, const char* name, const std::vector<double>& v, int64_t expected) {
  if (static_cast<int64_t>(v.size()) != expected) {
    std::fprintf(stderr, "tilec reference %s: %s has %zu elements, its shape needs %lld\n", fn,
                 name, v.size(), static_cast<long long>(expected));
    std::abort();
  }
}

void CheckPositive(const char* fn, std::initializer_list<int> sizes) {
  for (int s : sizes) {
    if (s <= 0) Fail(fn, "every size argument must be positive");
  }
}

// out[0..dim) = sum_j softmax(scores)_j * values(j)[0..dim), where values(j)
// points at row j's dim values. Keys with a score of -inf take no part.
template <typename ValueRow>
void SoftmaxWeightedSum(const std::vector<double>& scores, int dim, ValueRow values, double* out) {
  double max_score = kNegInf;
  for (double s : scores) max_score = std::max(max_score, s);
  for (int d = 0; d < dim; ++d) out[d] = 0;
  if (max_score == kNegInf) return;  // no visible key
  double denom = 0;
  for (size_t j = 0; j < scores.size(); ++j) {
    if (scores[j] == kNegInf) continue;
    double p = std::exp(scores[j] - max_score);
    denom += p;
    const double* row = values(static_cast<int>(j));
    for (int d = 0; d < dim; ++d) out[d] += p * row[d];
  }
  for (int d = 0; d < dim; ++d) out[d] /= denom;
}

double Dot(const double* a, const double* b, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

std::vector<double> GemmRef(const std::vector<double>& a, const std::vector<double>& b, int m,
                            int n, int k, bool trans_a, bool trans_b) {
  CheckPositive("GemmRef", {m, n, k});
  CheckSize("GemmRef", "a", a, int64_t{m} * k);
  CheckSize("GemmRef", "b", b, int64_t{k} * n);
  std::vector<double> c(static_cast<size_t>(m) * n);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int l = 0; l < k; ++l) {
        double av = trans_a ? a[static_cast<size_t>(l) * m + i] : a[static_cast<size_t>(i) * k + l];
        double bv = trans_b ? b[static_cast<size_t>(j) * k + l] : b[static_cast<size_t>(l) * n + j];
        s += av * bv;
      }
      c[static_cast<size_t>(i) * n + j] = s;
    }
  }
  return c;
}

std::vector<double> BatchedGemmRef(const std::vector<double>& a, const std::vector<double>& b,
                                   int batch, int m, int n, int k) {
  CheckPositive("BatchedGemmRef", {batch, m, n, k});
  CheckSize("BatchedGemmRef", "a", a, int64_t{batch} * m * k);
  CheckSize("BatchedGemmRef", "b", b, int64_t{batch} * k * n);
  std::vector<double> c;
  c.reserve(static_cast<size_t>(batch) * m * n);
  for (int i = 0; i < batch; ++i) {
    std::vector<double> ai(a.begin() + static_cast<int64_t>(i) * m * k,
                           a.begin() + static_cast<int64_t>(i + 1) * m * k);
    std::vector<double> bi(b.begin() + static_cast<int64_t>(i) * k * n,
                           b.begin() + static_cast<int64_t>(i + 1) * k * n);
    std::vector<double> ci = GemmRef(ai, bi, m, n, k, false, false);
    c.insert(c.end(), ci.begin(), ci.end());
  }
  return c;
}

std::vector<double> GemmSplitKRef(const std::vector<double>& a, const std::vector<double>& b,
                                  const std::vector<double>& c_in, int m, int n, int k) {
  CheckSize("GemmSplitKRef", "c_in", c_in, int64_t{m} * n);
  std::vector<double> c = GemmRef(a, b, m, n, k, false, false);
  for (size_t i = 0; i < c.size(); ++i) c[i] += c_in[i];
  return c;
}

std::vector<double> ElementwiseAddRef(const std::vector<double>& a, const std::vector<double>& b,
                                      int m, int n) {
  CheckPositive("ElementwiseAddRef", {m, n});
  CheckSize("ElementwiseAddRef", "a", a, int64_t{m} * n);
  CheckSize("ElementwiseAddRef", "b", b, int64_t{m} * n);
  std::vector<double> c(a.size());
  for (size_t i = 0; i < a.size(); ++i) c[i] = a[i] + b[i];
  return c;
}

std::vector<double> SoftmaxRef(const std::vector<double>& x, int m, int n) {
  CheckPositive("SoftmaxRef", {m, n});
  CheckSize("SoftmaxRef", "x", x, int64_t{m} * n);
  std::vector<double> y(x.size());
  for (int i = 0; i < m; ++i) {
    const double* row = &x[static_cast<size_t>(i) * n];
    double* out = &y[static_cast<size_t>(i) * n];
    double mx = kNegInf;
    for (int j = 0; j < n; ++j) mx = std::max(mx, row[j]);
    double denom = 0;
    for (int j = 0; j < n; ++j) denom += std::exp(row[j] - mx);
    for (int j = 0; j < n; ++j) out[j] = std::exp(row[j] - mx) / denom;
  }
  return y;
}

std::vector<double> RmsNormRef(const std::vector<double>& x, const std::vector<double>& weight,
                               int m, int n, double eps) {
  CheckPositive("RmsNormRef", {m, n});
  CheckSize("RmsNormRef", "x", x, int64_t{m} * n);
  CheckSize("RmsNormRef", "weight", weight, n);
  std::vector<double> y(x.size());
  for (int i = 0; i < m; ++i) {
    const double* row = &x[static_cast<size_t>(i) * n];
    double mean_sq = 0;
    for (int j = 0; j < n; ++j) mean_sq += row[j] * row[j];
    mean_sq /= n;
    double inv_rms = 1.0 / std::sqrt(mean_sq + eps);
    for (int j = 0; j < n; ++j) y[static_cast<size_t>(i) * n + j] = row[j] * inv_rms * weight[j];
  }
  return y;
}

std::vector<double> LayerNormRef(const std::vector<double>& x, const std::vector<double>& gamma,
                                 const std::vector<double>& beta, int m, int n, double eps) {
  CheckPositive("LayerNormRef", {m, n});
  CheckSize("LayerNormRef", "x", x, int64_t{m} * n);
  CheckSize("LayerNormRef", "gamma", gamma, n);
  CheckSize("LayerNormRef", "beta", beta, n);
  std::vector<double> y(x.size());
  for (int i = 0; i < m; ++i) {
    const double* row = &x[static_cast<size_t>(i) * n];
    double mean = 0;
    for (int j = 0; j < n; ++j) mean += row[j];
    mean /= n;
    double var = 0;
    for (int j = 0; j < n; ++j) var += (row[j] - mean) * (row[j] - mean);
    var /= n;
    double inv_std = 1.0 / std::sqrt(var + eps);
    for (int j = 0; j < n; ++j) {
      y[static_cast<size_t>(i) * n + j] = (row[j] - mean) * inv_std * gamma[j] + beta[j];
    }
  }
  return y;
}

std::vector<double> RowSumRef(const std::vector<double>& x, int m, int n) {
  CheckPositive("RowSumRef", {m, n});
  CheckSize("RowSumRef", "x", x, int64_t{m} * n);
  std::vector<double> y(m, 0.0);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) y[i] += x[static_cast<size_t>(i) * n + j];
  }
  return y;
}

std::vector<double> CumsumRef(const std::vector<double>& x, int m, int n, bool reverse) {
  CheckPositive("CumsumRef", {m, n});
  CheckSize("CumsumRef", "x", x, int64_t{m} * n);
  std::vector<double> y(x.size());
  for (int i = 0; i < m; ++i) {
    double running = 0;
    for (int t = 0; t < n; ++t) {
      int j = reverse ? n - 1 - t : t;
      running += x[static_cast<size_t>(i) * n + j];
      y[static_cast<size_t>(i) * n + j] = running;
    }
  }
  return y;
}

std::vector<double> AttentionRef(const std::vector<double>& q, const std::vector<double>& k,
                                 const std::vector<double>& v, int batch, int heads, int seq_q,
                                 int seq_kv, int dim, bool causal, double scale) {
  CheckPositive("AttentionRef", {batch, heads, seq_q, seq_kv, dim});
  CheckSize("AttentionRef", "q", q, int64_t{batch} * seq_q * heads * dim);
  CheckSize("AttentionRef", "k", k, int64_t{batch} * seq_kv * heads * dim);
  CheckSize("AttentionRef", "v", v, int64_t{batch} * seq_kv * heads * dim);
  // [b, s, h, d] offsets.
  auto q_at = [&](int b, int i, int h) {
    return (((static_cast<size_t>(b) * seq_q + i) * heads + h) * dim);
  };
  auto kv_at = [&](int b, int j, int h) {
    return (((static_cast<size_t>(b) * seq_kv + j) * heads + h) * dim);
  };
  std::vector<double> o(q.size());
  std::vector<double> scores(seq_kv);
  for (int b = 0; b < batch; ++b) {
    for (int h = 0; h < heads; ++h) {
      for (int i = 0; i < seq_q; ++i) {
        for (int j = 0; j < seq_kv; ++j) {
          scores[j] =
              (causal && j > i) ? kNegInf : scale * Dot(&q[q_at(b, i, h)], &k[kv_at(b, j, h)], dim);
        }
        SoftmaxWeightedSum(
            scores, dim, [&](int j) { return &v[kv_at(b, j, h)]; }, &o[q_at(b, i, h)]);
      }
    }
  }
  return o;
}

std::vector<double> GqaDecodeRef(const std::vector<double>& q, const std::vector<double>& k,
                                 const std::vector<double>& v, int batch, int heads, int groups,
                                 int seqlen_kv, int dim, double scale) {
  GqaDecodeSplit one = GqaDecodeSplitRef(q, k, v, batch, heads, groups, seqlen_kv, dim, scale,
                                         /*num_split=*/1, /*split_len=*/seqlen_kv);
  // With a single slice covering every key, its partial output is the
  // output: [batch, heads, 1, dim] has the layout of [batch, heads, dim].
  return one.out_partial;
}

GqaDecodeSplit GqaDecodeSplitRef(const std::vector<double>& q, const std::vector<double>& k,
                                 const std::vector<double>& v, int batch, int heads, int groups,
                                 int seqlen_kv, int dim, double scale, int num_split,
                                 int split_len) {
  const char* fn = "GqaDecodeSplitRef";
  CheckPositive(fn, {batch, heads, groups, seqlen_kv, dim, num_split, split_len});
  if (heads % groups != 0) Fail(fn, "heads must be a multiple of groups");
  CheckSize(fn, "q", q, int64_t{batch} * heads * dim);
  CheckSize(fn, "k", k, int64_t{batch} * seqlen_kv * groups * dim);
  CheckSize(fn, "v", v, int64_t{batch} * seqlen_kv * groups * dim);
  const int heads_per_group = heads / groups;
  auto kv_at = [&](int b, int j, int g) {
    return ((static_cast<size_t>(b) * seqlen_kv + j) * groups + g) * dim;
  };
  GqaDecodeSplit r;
  r.out_partial.assign(static_cast<size_t>(batch) * heads * num_split * dim, 0.0);
  r.lse.assign(static_cast<size_t>(batch) * heads * num_split, kNegInf);
  for (int b = 0; b < batch; ++b) {
    for (int h = 0; h < heads; ++h) {
      const int g = h / heads_per_group;
      const double* qv = &q[(static_cast<size_t>(b) * heads + h) * dim];
      for (int s = 0; s < num_split; ++s) {
        const int64_t begin = int64_t{s} * split_len;
        const int64_t end = std::min<int64_t>(begin + split_len, seqlen_kv);
        const size_t slot = (static_cast<size_t>(b) * heads + h) * num_split + s;
        if (begin >= end) continue;  // empty slice: lse -inf, output zeros
        std::vector<double> scores;
        for (int64_t j = begin; j < end; ++j) {
          scores.push_back(scale * Dot(qv, &k[kv_at(b, static_cast<int>(j), g)], dim));
        }
        double mx = kNegInf;
        for (double sc : scores) mx = std::max(mx, sc);
        double denom = 0;
        for (double sc : scores) denom += std::exp(sc - mx);
        r.lse[slot] = mx + std::log(denom);
        SoftmaxWeightedSum(
            scores, dim, [&](int j) { return &v[kv_at(b, static_cast<int>(begin) + j, g)]; },
            &r.out_partial[slot * dim]);
      }
    }
  }
  return r;
}

std::vector<double> MlaDecodeRef(const std::vector<double>& q, const std::vector<double>& q_pe,
                                 const std::vector<double>& kv, const std::vector<double>& k_pe,
                                 int batch, int heads, int seqlen_kv, int dim, int pe_dim,
                                 double scale) {
  const char* fn = "MlaDecodeRef";
  CheckPositive(fn, {batch, heads, seqlen_kv, dim, pe_dim});
  CheckSize(fn, "q", q, int64_t{batch} * heads * dim);
  CheckSize(fn, "q_pe", q_pe, int64_t{batch} * heads * pe_dim);
  CheckSize(fn, "kv", kv, int64_t{batch} * seqlen_kv * dim);
  CheckSize(fn, "k_pe", k_pe, int64_t{batch} * seqlen_kv * pe_dim);
  std::vector<double> o(q.size());
  std::vector<double> scores(seqlen_kv);
  for (int b = 0; b < batch; ++b) {
    for (int h = 0; h < heads; ++h) {
      const size_t bh = static_cast<size_t>(b) * heads + h;
      for (int j = 0; j < seqlen_kv; ++j) {
        const size_t bj = static_cast<size_t>(b) * seqlen_kv + j;
        scores[j] = scale * (Dot(&q[bh * dim], &kv[bj * dim], dim) +
                             Dot(&q_pe[bh * pe_dim], &k_pe[bj * pe_dim], pe_dim));
      }
      SoftmaxWeightedSum(
          scores, dim, [&](int j) { return &kv[(static_cast<size_t>(b) * seqlen_kv + j) * dim]; },
          &o[bh * dim]);
    }
  }
  return o;
}

std::vector<double> DequantInt4Ref(const std::vector<double>& b_packed,
                                   const std::vector<double>& scales, int n, int k,
                                   int group_size) {
  const char* fn = "DequantInt4Ref";
  CheckPositive(fn, {n, k, group_size});
  if (k % 2 != 0) Fail(fn, "k must be even: two int4 values per byte");
  const int num_groups = (k + group_size - 1) / group_size;
  CheckSize(fn, "b_packed", b_packed, int64_t{n} * (k / 2));
  CheckSize(fn, "scales", scales, int64_t{n} * num_groups);
  std::vector<double> w(static_cast<size_t>(n) * k);
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < k; ++c) {
      const double byte_value = b_packed[static_cast<size_t>(r) * (k / 2) + c / 2];
      if (byte_value < 0 || byte_value > 255 || byte_value != std::floor(byte_value)) {
        Fail(fn, "b_packed holds a value that is not a byte (an integer in [0, 255])");
      }
      const int byte = static_cast<int>(byte_value);
      const int nibble = (c % 2 == 0) ? (byte & 0xF) : (byte >> 4);
      const int value = nibble >= 8 ? nibble - 16 : nibble;  // two's complement
      w[static_cast<size_t>(r) * k + c] =
          value * scales[static_cast<size_t>(r) * num_groups + c / group_size];
    }
  }
  return w;
}

std::vector<double> DequantGemmRef(const std::vector<double>& a,
                                   const std::vector<double>& b_packed,
                                   const std::vector<double>& scales, int m, int n, int k,
                                   int group_size) {
  std::vector<double> w = DequantInt4Ref(b_packed, scales, n, k, group_size);
  return GemmRef(a, w, m, n, k, /*trans_a=*/false, /*trans_b=*/true);
}

std::vector<double> Conv2dRef(const std::vector<double>& x, const std::vector<double>& w, int batch,
                              int in_h, int in_w, int channels, int filters, int kh, int kw,
                              int stride, int pad) {
  const char* fn = "Conv2dRef";
  CheckPositive(fn, {batch, in_h, in_w, channels, filters, kh, kw, stride});
  if (pad < 0) Fail(fn, "pad must not be negative");
  const int out_h = (in_h + 2 * pad - kh) / stride + 1;
  const int out_w = (in_w + 2 * pad - kw) / stride + 1;
  if (in_h + 2 * pad < kh || in_w + 2 * pad < kw) Fail(fn, "the kernel is larger than the image");
  CheckSize(fn, "x", x, int64_t{batch} * in_h * in_w * channels);
  CheckSize(fn, "w", w, int64_t{kh} * kw * channels * filters);
  std::vector<double> out(static_cast<size_t>(batch) * out_h * out_w * filters, 0.0);
  for (int b = 0; b < batch; ++b) {
    for (int oh = 0; oh < out_h; ++oh) {
      for (int ow = 0; ow < out_w; ++ow) {
        double* o = &out[((static_cast<size_t>(b) * out_h + oh) * out_w + ow) * filters];
        for (int r = 0; r < kh; ++r) {
          const int ih = oh * stride + r - pad;
          if (ih < 0 || ih >= in_h) continue;
          for (int s = 0; s < kw; ++s) {
            const int iw = ow * stride + s - pad;
            if (iw < 0 || iw >= in_w) continue;
            for (int c = 0; c < channels; ++c) {
              const double xv =
                  x[((static_cast<size_t>(b) * in_h + ih) * in_w + iw) * channels + c];
              const double* wrow = &w[((static_cast<size_t>(r) * kw + s) * channels + c) * filters];
              for (int f = 0; f < filters; ++f) o[f] += xv * wrow[f];
            }
          }
        }
      }
    }
  }
  return out;
}

AtomicFold AtomicFoldRef(const std::vector<double>& a, const std::vector<double>& b,
                         const std::vector<double>& o, int m, int n, const std::string& op,
                         bool fold, double modulus) {
  CheckPositive("AtomicFoldRef", {m, n});
  CheckSize("AtomicFoldRef", "a", a, int64_t{m} * n);
  CheckSize("AtomicFoldRef", "b", b, int64_t{m} * n);
  CheckSize("AtomicFoldRef", "o", o, n);
  if (op != "add" && op != "max" && op != "min") {
    std::fprintf(stderr, "AtomicFoldRef: op must be add, max or min, not %s\n", op.c_str());
    std::abort();
  }
  auto combine = [&](double x, double y) {
    if (op == "max") return std::max(x, y);
    if (op == "min") return std::min(x, y);
    return modulus > 0 ? std::fmod(x + y, modulus) : x + y;
  };
  AtomicFold r{b, o};
  for (size_t e = 0; e < a.size(); ++e) r.b[e] = combine(b[e], a[e]);
  for (int j = 0; fold && j < n; ++j) {
    for (int i = 0; i < m; ++i) r.o[j] = combine(r.o[j], a[static_cast<size_t>(i) * n + j]);
  }
  return r;
}

ClaimSlots ClaimSlotsRef(const std::vector<double>& x, const std::vector<double>& count,
                         const std::vector<double>& slots_in, int n, int slots) {
  CheckPositive("ClaimSlotsRef", {n, slots});
  CheckSize("ClaimSlotsRef", "x", x, n);
  CheckSize("ClaimSlotsRef", "count", count, 4);
  CheckSize("ClaimSlotsRef", "slots_in", slots_in, int64_t{4} * slots);
  ClaimSlots r{count, slots_in};
  for (double xi : x) {
    const size_t bucket = static_cast<uint64_t>(static_cast<int64_t>(xi)) & 3;
    const double pos = r.count[bucket]++;
    if (pos >= 0 && pos < slots) r.slots[bucket * slots + static_cast<size_t>(pos)] = 1;
  }
  return r;
}

}  // namespace tilec::reference
