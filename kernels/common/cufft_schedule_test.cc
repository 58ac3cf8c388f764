// Checks the GPU kernel's geometry (cufft_schedule.h) on the CPU: each Schedule is run
// with a reference of cuFFT's plan-many semantics (advanced data layout, CUFFT_FORWARD
// = -1, unnormalised, R2C keeping n/2+1 bins, C2R reading a Hermitian half), and the
// result is compared with direct DFTs along the axes of a row-major block. Also: no
// launch reads or writes outside its buffer, each step writes every element of its
// output exactly once (pitched copies' padding never), every launch's real-side pointer
// is aligned as cuFFT needs, the working memory's parts do not overlap, every output
// element ends up written (an R2C over zero points by zeroing), and bad shapes are
// refused. Exit status 0 when all checks hold.
// Run by tests/test_engines.py (make -C kernels schedule-test).
#include <cmath>
#include <complex>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cufft_schedule.h"

namespace {

using cs_complex = std::complex<double>;
namespace cs = pfft::cufft_schedule;

int failures = 0;
#define CHECK(cond, ...)                                                             \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      if (failures < 20) {                                                           \
        std::fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
        std::fprintf(stderr, __VA_ARGS__);                                           \
        std::fprintf(stderr, "\n");                                                  \
      }                                                                              \
      ++failures;                                                                    \
    }                                                                                \
  } while (0)

const double kPi = 3.14159265358979323846;

// ------------------------------------------------------------ independent reference

// Row-major strides of dims.
std::vector<long long> Strides(const std::vector<long long> &d) {
  std::vector<long long> s(d.size(), 1);
  for (int i = int(d.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * d[i + 1];
  return s;
}

long long Count(const std::vector<long long> &d) {
  long long c = 1;
  for (long long v : d) c *= v;
  return c;
}

// x along `axis` replaced by its DFT with exp(sign 2 pi i j k / n).
void DftAxis(std::vector<cs_complex> &x, const std::vector<long long> &d, int axis, int sign) {
  auto st = Strides(d);
  long long n = d[axis], total = Count(d);
  std::vector<cs_complex> line(n);
  for (long long base = 0; base < total; ++base) {
    if ((base / st[axis]) % n != 0) continue;  // one start per line
    for (long long k = 0; k < n; ++k) {
      cs_complex acc = 0;
      for (long long j = 0; j < n; ++j)
        acc += x[base + j * st[axis]] * std::polar(1.0, sign * 2 * kPi * double(j * k % n) / n);
      line[k] = acc;
    }
    for (long long k = 0; k < n; ++k) x[base + k * st[axis]] = line[k];
  }
}

std::vector<cs_complex> RefC2C(std::vector<cs_complex> x, const std::vector<long long> &d,
                               const std::vector<int> &axes, int sign) {
  for (int a : axes) DftAxis(x, d, a, sign);
  return x;
}

// Real input, full complex DFT, the last listed axis cut to n/2+1 bins.
std::vector<cs_complex> RefR2C(const std::vector<double> &x, const std::vector<long long> &d,
                               const std::vector<int> &axes, int sign) {
  std::vector<cs_complex> full(x.begin(), x.end());
  full = RefC2C(full, d, axes, sign);
  int h = axes.back();
  auto dout = d;
  dout[h] = d[h] / 2 + 1;
  auto si = Strides(d), so = Strides(dout);
  std::vector<cs_complex> out(Count(dout));
  for (long long o = 0; o < Count(dout); ++o) {
    long long i = 0, rest = o;
    for (size_t k = 0; k < d.size(); ++k) {
      long long idx = rest / so[k];
      rest %= so[k];
      i += idx * si[k];
    }
    out[o] = full[i];
  }
  return out;
}

// Hermitian half (n/2+1 bins on the last listed axis) -> the real block of dims dout:
// the full spectrum by Hermitian symmetry over all transformed axes, then a DFT.
std::vector<double> RefC2R(const std::vector<cs_complex> &half, const std::vector<long long> &din,
                           const std::vector<long long> &dout, const std::vector<int> &axes,
                           int sign) {
  int h = axes.back();
  auto sh = Strides(din), sf = Strides(dout);
  std::vector<cs_complex> full(Count(dout));
  for (long long f = 0; f < Count(dout); ++f) {
    std::vector<long long> idx(dout.size());
    long long rest = f;
    for (size_t k = 0; k < dout.size(); ++k) idx[k] = rest / sf[k], rest %= sf[k];
    bool mirror = idx[h] >= din[h];
    if (mirror)
      for (int a : axes) idx[a] = (dout[a] - idx[a]) % dout[a];
    long long i = 0;
    for (size_t k = 0; k < din.size(); ++k) i += idx[k] * sh[k];
    full[f] = mirror ? std::conj(half[i]) : half[i];
  }
  full = RefC2C(full, dout, axes, sign);
  std::vector<double> out(full.size());
  for (size_t i = 0; i < full.size(); ++i) out[i] = full[i].real();
  return out;
}

// numpy's irfftn of any half spectrum (Hermitian or not) with exp(sign ...): the C2C
// over the other axes, then along the halved axis h the real part of the zero bin and,
// for an even length, of the Nyquist bin, the other bins standing for two (k and n-k).
std::vector<double> RefIrfftn(std::vector<cs_complex> half, const std::vector<long long> &din,
                              const std::vector<long long> &dout, const std::vector<int> &axes,
                              int sign) {
  int h = axes.back();
  for (int a : axes)
    if (a != h) DftAxis(half, din, a, sign);
  auto si = Strides(din), so = Strides(dout);
  long long n = dout[h];
  std::vector<double> out(Count(dout));
  for (long long o = 0; o < Count(dout); ++o) {
    long long base = 0, rest = o, x = 0;
    for (size_t k = 0; k < dout.size(); ++k) {
      long long idx = rest / so[k];
      rest %= so[k];
      if (int(k) == h) x = idx;
      else base += idx * si[k];
    }
    double acc = 0;
    for (long long k = 0; k < din[h]; ++k) {
      cs_complex z = half[base + k * si[h]];
      bool single = k == 0 || 2 * k == n;  // the zero and Nyquist bins
      if (single) z = z.real();
      double term = (z * std::polar(1.0, sign * 2 * kPi * double(x * k % n) / n)).real();
      acc += single ? term : 2 * term;
    }
    out[o] = acc;
  }
  return out;
}

// ------------------------------------------------------------ cuFFT's semantics

// A buffer of complex or real elements, with a count of writes per element.
struct Buf {
  std::vector<cs_complex> c;
  std::vector<double> r;
  std::vector<int> writes;
  std::vector<bool> pad;  // elements no step may read or write (a pitched copy's padding)
  bool real = false;
  long long size() const { return real ? (long long)r.size() : (long long)c.size(); }
};

// One step as cuFFT runs it: for each launch l and batch b, element x (row-major over
// n[0..rank-1], inembed = onembed = n) is at l*step + b*dist + linear(x)*stride, where
// linear uses n[1..rank-1] (cuFFT ignores embed[0]). R2C/C2R: rank 1, the complex side
// holds n/2+1 elements. Out of place semantics per transform (in place works the same,
// since one transform's elements are read before they are written). `real_size`: bytes
// of a real element, for the alignment of each launch's real side. Each dst element
// must be written once, none in padding.
void RunStep(const cs::Step &st, Buf &src, Buf &dst, long long real_size) {
  const cs::Layout &l = st.layout;
  CHECK(l.rank >= 1 && l.rank <= 3, "rank %d", l.rank);
  if (st.kind != cs::Kind::kC2C) CHECK(l.rank == 1, "real transform of rank %d", l.rank);
  long long n_log = 1;
  for (int i = 0; i < l.rank; ++i) n_log *= l.n[i];
  long long n_in = n_log, n_out = n_log;
  long long half = l.n[l.rank - 1] / 2 + 1;
  if (st.kind == cs::Kind::kR2C) n_out = half;
  if (st.kind == cs::Kind::kC2R) n_in = half;
  auto linear = [&](long long flat, long long count_last) {  // flat index over n, last cut
    // digits of flat over (n[0..rank-2], count_last), placed with embed n[1..]
    std::vector<long long> dig(l.rank);
    long long rest = flat;
    for (int i = l.rank - 1; i >= 0; --i) {
      long long len = i == l.rank - 1 ? count_last : l.n[i];
      dig[i] = rest % len;
      rest /= len;
    }
    long long pos = 0;
    for (int i = 0; i < l.rank; ++i) pos = pos * (i == 0 ? 1 : l.n[i]) + dig[i];
    return pos;
  };
  std::fill(dst.writes.begin(), dst.writes.end(), 0);
  long long last = l.n[l.rank - 1];
  for (long long lp = 0; lp < l.loops; ++lp) {
    if (st.kind == cs::Kind::kR2C)
      CHECK(lp * l.in_step * real_size % cs::kAlignBytes == 0,
            "R2C launch %lld reads from real element %lld: unaligned", lp, lp * l.in_step);
    if (st.kind == cs::Kind::kC2R)
      CHECK(lp * l.out_step * real_size % cs::kAlignBytes == 0,
            "C2R launch %lld writes from real element %lld: unaligned", lp, lp * l.out_step);
    for (long long b = 0; b < l.batch; ++b) {
      // gather
      std::vector<cs_complex> v(n_in);
      bool ok = true;
      for (long long e = 0; e < n_in; ++e) {
        long long pos = linear(e, st.kind == cs::Kind::kC2R ? half : last);
        long long at = lp * l.in_step + b * l.idist + pos * l.istride;
        if (at < 0 || at >= src.size() || (!src.pad.empty() && src.pad[at])) {
          CHECK(false, "read at %lld of %lld (or of padding)", at, src.size());
          ok = false;
          break;
        }
        v[e] = src.real ? cs_complex(src.r[at], 0) : src.c[at];
      }
      if (!ok) return;
      // transform
      std::vector<cs_complex> w(n_out);
      if (st.kind == cs::Kind::kC2C) {
        std::vector<long long> d(l.n.begin(), l.n.begin() + l.rank);
        std::vector<int> axes;
        for (int i = 0; i < l.rank; ++i) axes.push_back(i);
        w = RefC2C(v, d, axes, st.direction);
      } else if (st.kind == cs::Kind::kR2C) {
        for (long long k = 0; k < half; ++k)
          for (long long j = 0; j < last; ++j)
            w[k] += v[j] * std::polar(1.0, -2 * kPi * double(j * k % last) / last);
      } else {  // C2R: cuFFT's + sign over the Hermitian extension
        // cuFFT reads a Hermitian half: what it makes of imaginary zero or Nyquist bins
        // is not numpy's (they leak into the result), so the schedule must hand it none
        bool even = last % 2 == 0;
        CHECK(v[0].imag() == 0 && (!even || v[last / 2].imag() == 0),
              "C2R launch %lld batch %lld: imaginary zero or Nyquist bin (%g, %g)", lp, b,
              v[0].imag(), even ? v[last / 2].imag() : 0.0);
        for (long long x = 0; x < last; ++x) {
          cs_complex acc = 0;
          for (long long k = 0; k < last; ++k) {
            cs_complex z = k < half ? v[k] : std::conj(v[last - k]);
            acc += z * std::polar(1.0, 2 * kPi * double(x * k % last) / last);
          }
          w[x] = acc.real();
        }
      }
      // scatter
      for (long long e = 0; e < n_out; ++e) {
        long long pos = linear(e, st.kind == cs::Kind::kR2C ? half : last);
        long long at = lp * l.out_step + b * l.odist + pos * l.ostride;
        if (at < 0 || at >= dst.size() || (!dst.pad.empty() && dst.pad[at])) {
          CHECK(false, "write at %lld of %lld (or of padding)", at, dst.size());
          return;
        }
        if (dst.real) dst.r[at] = w[e].real();
        else dst.c[at] = w[e];
        ++dst.writes[at];
      }
    }
  }
  long long wrong = 0;
  for (size_t i = 0; i < dst.writes.size(); ++i)
    wrong += dst.writes[i] != (dst.pad.empty() || !dst.pad[i] ? 1 : 0);
  CHECK(wrong == 0, "%lld of %lld output elements not written exactly once", wrong, dst.size());
}

// ------------------------------------------------------------ the handlers, emulated

std::string Describe(cs::Kind kind, const std::vector<long long> &din,
                     const std::vector<int> &axes, bool forward, double scale,
                     long long real_size) {
  std::string s = kind == cs::Kind::kC2C ? "c2c" : kind == cs::Kind::kR2C ? "r2c" : "c2r";
  s += " dims (";
  for (long long v : din) s += std::to_string(v) + ",";
  s += ") axes (";
  for (int a : axes) s += std::to_string(a) + ",";
  s += forward ? ") forward" : ") backward";
  s += " scale " + std::to_string(scale);
  s += real_size == 4 ? " single" : " double";
  return s;
}

double RelErr(const std::vector<cs_complex> &a, const std::vector<cs_complex> &b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) num += std::norm(a[i] - b[i]), den += std::norm(b[i]);
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

// A pitched buffer of `c` (rows * pitch real elements), its padding marked and NaN.
Buf Pitched(const cs::PitchedCopy &c) {
  Buf b;
  b.real = true;
  b.r.assign(c.rows * c.pitch, std::nan(""));
  b.writes.assign(b.r.size(), 0);
  b.pad.assign(b.r.size(), false);
  for (long long row = 0; row < c.rows; ++row)
    for (long long e = c.width; e < c.pitch; ++e) b.pad[row * c.pitch + e] = true;
  return b;
}

void CopyRows(const cs::PitchedCopy &c, const std::vector<double> &from, long long from_pitch,
              std::vector<double> &to, long long to_pitch) {
  for (long long row = 0; row < c.rows; ++row)
    for (long long e = 0; e < c.width; ++e) to[row * to_pitch + e] = from[row * from_pitch + e];
}

// The working memory's parts lie in order, aligned, without overlap.
void CheckArena(const cs::Schedule &s, long long real_size, const std::string &what) {
  const long long work = 1000;
  cs::Arena a = cs::Arrange(s, real_size, work);
  CHECK(a.tmp == 0 && a.pitched % cs::kArenaAlignBytes == 0 &&
            a.work % cs::kArenaAlignBytes == 0,
        "%s: parts unaligned", what.c_str());
  CHECK(a.pitched >= s.tmp_elems * 2 * real_size, "%s: the copy overlaps the pitched part",
        what.c_str());
  CHECK(a.work - a.pitched >= s.pitched_elems * real_size && a.total - a.work >= work,
        "%s: parts overlap", what.c_str());
  CHECK((s.tmp_elems > 0) == s.copy_to_tmp, "%s: a copy without room, or room for none",
        what.c_str());
  CHECK(s.pitched_elems == s.pitch_in.rows * s.pitch_in.pitch + s.pitch_out.rows * s.pitch_out.pitch,
        "%s: pitched room differs from the pitched copies", what.c_str());
}

// Runs one handler's schedule as pfft_cuda.cu does and compares with the reference.
// `hermitian` (C2R): the input is the r2c of a real block, else random bins (numpy's
// irfftn of them is the reference).
void CheckCase(cs::Kind kind, const std::vector<long long> &logical, std::vector<int> axes,
               bool forward, double scale, long long real_size, std::mt19937_64 &rng,
               bool hermitian = true) {
  std::normal_distribution<double> g;
  int h = axes.back();
  auto real_dims = logical, half_dims = logical;
  half_dims[h] = logical[h] / 2 + 1;
  std::vector<long long> din = logical, dout = logical;
  if (kind == cs::Kind::kR2C) dout = half_dims;
  if (kind == cs::Kind::kC2R) din = half_dims, dout = real_dims;
  cs::Schedule s;
  std::string err = cs::MakeSchedule(kind, din, dout, axes, forward, scale, real_size, s);
  std::string what = Describe(kind, din, axes, forward, scale, real_size);
  CHECK(err.empty(), "%s: %s", what.c_str(), err.c_str());
  if (!err.empty()) return;
  CheckArena(s, real_size, what);
  CHECK(!s.zero_out && !s.steps.empty(), "%s: a block with points runs no step", what.c_str());
  Buf in, out, tmp;
  int sign = forward ? -1 : +1;
  std::vector<cs_complex> expect;
  if (kind == cs::Kind::kR2C) {
    in.real = true;
    in.r.resize(Count(din));
    for (auto &v : in.r) v = g(rng);
    expect = RefR2C(in.r, din, axes, sign);
  } else if (kind == cs::Kind::kC2R && !hermitian) {
    in.c.resize(Count(din));
    for (auto &v : in.c) v = cs_complex(g(rng), g(rng));
    auto y = RefIrfftn(in.c, din, dout, axes, sign);
    expect.assign(y.begin(), y.end());
    what += " of random bins";
  } else if (kind == cs::Kind::kC2R) {
    // a Hermitian half: the r2c of a real block (imaginary DC/Nyquist bins are zero)
    std::vector<double> x(Count(dout));
    for (auto &v : x) v = g(rng);
    in.c = RefR2C(x, dout, axes, -1);
    auto y = RefC2R(in.c, din, dout, axes, sign);
    expect.assign(y.begin(), y.end());
    if (sign == +1) {  // and independently of RefC2R: the + sign undoes r2c, times N
      long long big_n = 1;
      for (int a : axes) big_n *= dout[a];
      std::vector<cs_complex> nx(x.size());
      for (size_t i = 0; i < x.size(); ++i) nx[i] = double(big_n) * x[i];
      CHECK(RelErr(expect, nx) < 1e-10, "%s: reference c2r(r2c(x)) != N x", what.c_str());
    }
    auto z = RefIrfftn(in.c, din, dout, axes, sign);  // the two references agree there
    CHECK(RelErr(expect, std::vector<cs_complex>(z.begin(), z.end())) < 1e-10,
          "%s: numpy's irfftn of a Hermitian half differs from the Hermitian extension's",
          what.c_str());
  } else {
    in.c.resize(Count(din));
    for (auto &v : in.c) v = cs_complex(g(rng), g(rng));
    expect = RefC2C(in.c, din, axes, sign);
  }
  for (auto &v : expect) v *= scale;
  const double nan = std::nan("");
  out.real = kind == cs::Kind::kC2R;
  if (out.real) out.r.assign(Count(dout), nan);
  else out.c.assign(Count(dout), cs_complex(nan, nan));
  out.writes.assign(Count(dout), 0);
  if (s.copy_to_tmp) {
    tmp.c = in.c;
    if (s.conj_copy)
      for (auto &v : tmp.c) v = std::conj(v);
    tmp.writes.assign(tmp.c.size(), 0);
  }
  in.writes.assign(in.size(), 0);
  CHECK(!(s.pitch_in.rows && s.pitch_out.rows), "%s: two pitched copies", what.c_str());
  Buf pitched = Pitched(s.pitch_in.rows ? s.pitch_in : s.pitch_out);
  if (s.pitch_in.rows) CopyRows(s.pitch_in, in.r, s.pitch_in.width, pitched.r, s.pitch_in.pitch);
  auto buffer = [&](cs::Buffer b) -> Buf & {
    return b == cs::Buffer::kIn ? in : b == cs::Buffer::kOut ? out
         : b == cs::Buffer::kTmp ? tmp : pitched;
  };
  int before = failures;
  for (const cs::Step &st : s.steps) {
    if (st.kind == cs::Kind::kC2R)  // as pfft_cuda.cu's ZeroImag, between C2C and C2R
      for (long long i = 0; i < s.real_bins.count(); ++i) {
        long long at = s.real_bins.element(i);
        CHECK(at >= 0 && at < tmp.size(), "%s: real bin %lld outside the copy", what.c_str(), at);
        if (at >= 0 && at < tmp.size()) tmp.c[at].imag(0);
      }
    CHECK(st.dst != cs::Buffer::kIn, "%s: a step writes the input", what.c_str());
    RunStep(st, buffer(st.src), buffer(st.dst), real_size);
  }
  if (s.pitch_out.rows) {
    CopyRows(s.pitch_out, pitched.r, s.pitch_out.pitch, out.r, s.pitch_out.width);
    CHECK(s.pitch_out.rows * s.pitch_out.width == out.size(),
          "%s: the pitched copy does not cover the output", what.c_str());
  }
  std::vector<cs_complex> got;
  if (out.real) got.assign(out.r.begin(), out.r.end());
  else got = out.c;
  for (auto &v : got) v = (s.conj_out ? std::conj(v) : v) * s.scale;
  double e = RelErr(got, expect);
  CHECK(e < 1e-10, "%s: relative error %.3g", what.c_str(), e);
  if (failures != before) std::fprintf(stderr, "  in: %s\n", what.c_str());
}

void CheckRefused() {
  cs::Schedule s;
  CHECK(!cs::MakeSchedule(cs::Kind::kR2C, {4, 6}, {4, 6}, {0, 1}, true, 1, 4, s).empty(),
        "r2c without a halved axis is refused");
  CHECK(!cs::MakeSchedule(cs::Kind::kC2R, {4, 6}, {4, 9}, {0, 1}, true, 1, 4, s).empty(),
        "c2r with 6 bins for 9 points is refused");
  CHECK(cs::MakeSchedule(cs::Kind::kC2R, {4, 5}, {4, 9}, {0, 1}, true, 1, 4, s).empty(),
        "c2r with 5 bins for 9 points is taken");
  CHECK(!cs::MakeSchedule(cs::Kind::kC2C, {4, 6}, {4, 5}, {0, 1}, true, 1, 4, s).empty(),
        "c2c changing a shape is refused");
  CHECK(!cs::MakeSchedule(cs::Kind::kR2C, {4, 6}, {3, 4}, {1}, true, 1, 4, s).empty(),
        "r2c changing an axis it does not halve is refused");
  CHECK(cs::MakeSchedule(cs::Kind::kC2C, {4, 0, 3}, {4, 0, 3}, {0, 2}, true, 1, 4, s).empty() &&
            s.steps.empty() && !s.zero_out,
        "an empty block is taken and runs nothing");
  CHECK(cs::MakeSchedule(cs::Kind::kR2C, {0, 5}, {0, 3}, {0, 1}, true, 1, 4, s).empty() &&
            s.steps.empty() && !s.zero_out,
        "an r2c of an empty block is taken and runs nothing");
  CHECK(cs::MakeSchedule(cs::Kind::kC2R, {3, 1}, {3, 0}, {1}, true, 1, 8, s).empty() &&
            s.steps.empty() && !s.zero_out,
        "a c2r to zero points is taken and writes nothing (its output is empty)");
  CHECK(cs::MakeSchedule(cs::Kind::kR2C, {3, 0}, {3, 1}, {0, 1}, false, 2, 4, s).empty() &&
            s.steps.empty() && s.zero_out && s.tmp_elems == 0 && s.pitched_elems == 0,
        "an r2c over zero points zeroes its one bin a line, with no step");
  CHECK(!cs::MakeSchedule(cs::Kind::kR2C, {3, 0}, {3, 0}, {1}, true, 1, 4, s).empty(),
        "an r2c over zero points without its one bin is refused");
  CHECK(!cs::MakeSchedule(cs::Kind::kC2R, {3, 0}, {3, 0}, {1}, true, 1, 4, s).empty(),
        "a c2r of no bins is refused");
  std::vector<int> r;
  int64_t bad[] = {3}, rep[] = {0, -2}, neg[] = {-1, 0};
  CHECK(!cs::ResolveAxes(bad, 1, 3, r).empty(), "axis 3 of 3 is refused");
  CHECK(!cs::ResolveAxes(rep, 2, 2, r).empty(), "a repeated axis is refused");
  CHECK(!cs::ResolveAxes(nullptr, 0, 2, r).empty(), "no axes is refused");
  CHECK(cs::ResolveAxes(neg, 2, 3, r).empty() && r == std::vector<int>({2, 0}),
        "axes from the end resolve in the order given");
}

// The plans the documented examples need: one rank-3 plan for three adjacent axes,
// batching over the larger of outer and inner, 3+1 for four adjacent axes.
void CheckShapesOfPlans() {
  cs::Schedule s;
  cs::MakeSchedule(cs::Kind::kC2C, {8, 8, 8}, {8, 8, 8}, {0, 1, 2}, true, 1, 4, s);
  CHECK(s.steps.size() == 1 && s.steps[0].layout.rank == 3 && s.steps[0].layout.loops == 1,
        "fftn over (0,1,2) of a 3-D block is one rank-3 plan, one launch");
  cs::MakeSchedule(cs::Kind::kC2C, {8, 4, 2}, {8, 4, 2}, {0}, true, 1, 4, s);
  CHECK(s.steps.size() == 1 && s.steps[0].layout.istride == 8 && s.steps[0].layout.batch == 8 &&
            s.steps[0].layout.idist == 1 && s.steps[0].layout.loops == 1,
        "axis 0 is strided with a batch of the inner dims, one launch");
  cs::MakeSchedule(cs::Kind::kC2C, {2, 3, 4, 5}, {2, 3, 4, 5}, {0, 1, 2, 3}, true, 1, 4, s);
  CHECK(s.steps.size() == 2 && s.steps[0].layout.rank == 3 && s.steps[1].layout.rank == 1 &&
            s.steps[0].src == cs::Buffer::kIn && s.steps[1].src == cs::Buffer::kOut,
        "four adjacent axes: a rank-3 plan from the input, then a rank-1 plan in place");
  cs::MakeSchedule(cs::Kind::kC2C, {16, 4, 2}, {16, 4, 2}, {1}, true, 1, 4, s);
  CHECK(s.steps.size() == 1 && s.steps[0].layout.batch == 16 && s.steps[0].layout.loops == 2,
        "the middle axis batches the larger outer dims and loops over the inner");
  // real steps loop over the outer dims only, through a pitched copy where a launch
  // would start unaligned: a (3, 4, 5, 6) r2c over axis 2 gave cuFFT error 4 when its
  // launches stepped one float along the inner dims
  cs::MakeSchedule(cs::Kind::kR2C, {3, 4, 5, 6}, {3, 4, 3, 6}, {2}, true, 1, 4, s);
  CHECK(s.steps.size() == 1 && s.steps[0].layout.loops == 12 && s.steps[0].layout.batch == 6 &&
            s.pitch_in.rows == 12 && s.pitch_in.width == 30 && s.pitch_in.pitch == 32 &&
            s.steps[0].src == cs::Buffer::kPitched && s.steps[0].layout.in_step == 32,
        "r2c of (3,4,5,6) over axis 2, single: 12 launches from rows pitched to 32 floats");
  cs::MakeSchedule(cs::Kind::kR2C, {3, 4, 5, 6}, {3, 4, 3, 6}, {2}, true, 1, 8, s);
  CHECK(s.pitch_in.rows == 0 && s.steps[0].src == cs::Buffer::kIn &&
            s.steps[0].layout.in_step == 30,
        "r2c of (3,4,5,6) over axis 2, double: 30 doubles a row are aligned, no copy");
  cs::MakeSchedule(cs::Kind::kC2R, {16, 2, 3}, {16, 3, 3}, {1}, true, 1, 8, s);
  CHECK(s.pitch_out.rows == 16 && s.pitch_out.width == 9 && s.pitch_out.pitch == 10 &&
            s.steps.back().dst == cs::Buffer::kPitched && s.copy_to_tmp &&
            s.tmp_elems == 16 * 2 * 3,
        "c2r of (16,2,3) to (16,3,3) over axis 1, double: rows of 9 pitched to 10");
  cs::MakeSchedule(cs::Kind::kR2C, {7, 9}, {7, 5}, {1}, true, 1, 4, s);
  CHECK(s.pitch_in.rows == 0 && s.steps[0].layout.loops == 1 && s.steps[0].layout.batch == 7,
        "the last axis: one launch over every line, whatever its length");
}

}  // namespace

int main() {
  std::mt19937_64 rng(20261122);
  CheckRefused();
  CheckShapesOfPlans();
  // fixed cases: the shapes pfft's stages use (3-D blocks, one to three axes)
  const std::vector<std::vector<int>> axis_sets = {{0}, {1}, {2}, {0, 1}, {1, 2}, {0, 2},
                                                   {2, 0}, {0, 1, 2}, {2, 1, 0}, {1, 0, 2}};
  const cs::Kind kinds[] = {cs::Kind::kC2C, cs::Kind::kR2C, cs::Kind::kC2R};
  int cases = 0;
  for (cs::Kind kind : kinds)
    for (const auto &axes : axis_sets)
      for (bool fwd : {true, false}) {
        CheckCase(kind, {6, 5, 4}, axes, fwd, fwd ? 1.0 : 1.0 / 7, 4, rng);
        CheckCase(kind, {3, 8, 7}, axes, fwd, 1.0, 8, rng);
        CheckCase(kind, {5, 3, 3}, axes, fwd, 1.0, 4, rng);
        cases += 3;
        if (kind == cs::Kind::kC2R) {  // random bins, even and odd halved lengths
          CheckCase(kind, {6, 5, 4}, axes, fwd, 0.5, 4, rng, false);
          CheckCase(kind, {3, 8, 7}, axes, fwd, 1.0, 8, rng, false);
          cases += 2;
        }
      }
  // random blocks: 1 to 5 dims of 1 to 7, 1 to 4 axes in any order
  std::uniform_int_distribution<int> nd(1, 5), len(1, 7), coin(0, 1), k3(0, 2);
  for (int t = 0; t < 1500; ++t) {
    int ndim = nd(rng);
    std::vector<long long> dims(ndim);
    for (auto &d : dims) d = len(rng);
    std::vector<int> all(ndim);
    for (int i = 0; i < ndim; ++i) all[i] = i;
    std::shuffle(all.begin(), all.end(), rng);
    int naxes = std::uniform_int_distribution<int>(1, std::min(ndim, 4))(rng);
    std::vector<int> axes(all.begin(), all.begin() + naxes);
    CheckCase(kinds[k3(rng)], dims, axes, coin(rng) == 1, coin(rng) ? 1.0 : 0.25,
              coin(rng) ? 4 : 8, rng, coin(rng) == 1);
    ++cases;
  }
  if (failures) {
    std::fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  std::printf("cufft_schedule: %d transforms as cuFFT would run them match direct DFTs; "
              "all checks hold\n", cases);
  return 0;
}
