// How one local transform over any axes of a row-major block becomes cuFFT launches.
//
// Pure C++ (no CUDA): kernels/cuda/pfft_cuda.cu executes a Schedule with cuFFT, and
// kernels/common/cufft_schedule_test.cc executes the same Schedule on the CPU with a
// reference of cuFFT's advanced data layout and checks it against direct DFTs, so the
// GPU kernel's geometry is tested on machines without a GPU.
//
// The axes are sorted and cut into runs of adjacent axes (at most three, cuFFT's rank
// limit). A run [a..b] sees the block as (outer, n_a..n_b, inner): one plan transforms
// the run with element stride `inner` over a batch of `inner` (distance 1) or of `outer`
// (distance run*inner); the other batch dimension, the smaller, is a loop of launches.
// The first run reads the input and writes the output, later runs work in place.
// Real transforms do the halved axis (the last listed) as a rank-1 R2C/C2R plan and the
// other axes as C2C. cuFFT's R2C has the - sign and its C2R the + sign: the other sign
// is a conjugation, of the output after R2C, of the input copy before C2R (cuFFT
// overwrites a C2R input, so C2R always works on a copy).
//
// A C2R is numpy's irfftn of any half spectrum, Hermitian or not: the inverse C2C over
// the other axes, then a C2R along the halved axis that takes the real part of its zero
// bin and, for an even length, of its Nyquist bin. cuFFT's C2R reads a Hermitian half
// and lets those bins' imaginary parts leak into the result, so they are zeroed in the
// input copy between the C2C steps and the C2R step (`real_bins`).
//
// cuFFT refuses (CUFFT_INVALID_VALUE) a real-side pointer that is not aligned to the
// complex element: a real step therefore never loops over the inner dimensions (each
// launch would start one real element further), and where its launches over the outer
// dimensions would start at offsets that are not multiples of kAlignBytes, the real side
// goes through a pitched copy (rows padded to an aligned length).
//
// Every element of the output is written: each step writes every element of its
// destination once (a pitched copy's padding never), the first step that writes the
// output (or, C2R, the pitched copy that the copy back then spreads over the whole
// output) covers all of it, and later steps rewrite it in place. Where the input holds
// no element but the output does (an R2C over zero real points), the schedule has no
// step and asks for the output to be zeroed instead (`zero_out`): each bin is the
// empty sum.
//
// All working memory (the C2R input copy, the pitched copy, cuFFT's work area) is one
// buffer the caller provides, laid out by Arrange(); its size is known before the call
// (pfft asks for it from Python and declares it as an extra output of the custom call).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

// what a CUDA kernel calls too (RealBins)
#ifdef __CUDACC__
#define PFFT_HOST_DEVICE __host__ __device__
#else
#define PFFT_HOST_DEVICE
#endif

namespace pfft {
namespace cufft_schedule {

enum class Kind { kC2C, kR2C, kC2R };  // the transform of a handler, and of one step
// the handler's input, its output, the C2R input copy, the pitched copy of a real side
enum class Buffer { kIn, kOut, kTmp, kPitched };
constexpr int kForward = -1, kInverse = +1;  // CUFFT_FORWARD, CUFFT_INVERSE
// every launch's real-side pointer is a multiple of this many bytes from its buffer's
// start (XLA's buffers start at least this aligned)
constexpr long long kAlignBytes = 16;
// each part of the working memory starts at a multiple of this
constexpr long long kArenaAlignBytes = 256;

// One cufftPlanMany (advanced layout, inembed = onembed = n) and the loop of launches
// that covers the other batch dimension. Strides, distances and steps in elements.
struct Layout {
  int rank = 1;
  std::array<long long, 3> n{1, 1, 1};  // logical lengths; the real side's for R2C/C2R
  long long istride = 1, idist = 1, ostride = 1, odist = 1, batch = 1;
  long long loops = 1, in_step = 0, out_step = 0;  // launch l reads in + l*in_step ...
};

struct Step {
  Kind kind;
  int direction;  // kForward or kInverse (C2C; R2C is always forward, C2R inverse)
  Layout layout;
  Buffer src, dst;
};

// `rows` rows of `width` real elements, dense on the block's side and `pitch` apart
// in the pitched buffer (rows == 0: no copy).
struct PitchedCopy {
  long long rows = 0, width = 0, pitch = 0;
};

// The bins of a C2R's halved axis whose imaginary parts are zeroed in the input copy
// before the C2R step: the block seen as (outer, bins, inner) complex elements, bin 0
// and bin `nyquist` (-1: none, an odd length) of each (outer, inner) line
// (outer == 0: nothing to zero).
struct RealBins {
  long long outer = 0, bins = 0, inner = 0, nyquist = -1;
  PFFT_HOST_DEVICE long long count() const { return outer * inner * (nyquist >= 0 ? 2 : 1); }
  // the element of the i-th bin to zero, i < count()
  PFFT_HOST_DEVICE long long element(long long i) const {
    long long planes = nyquist >= 0 ? 2 : 1;
    long long in = i % inner, rest = i / inner;
    long long bin = rest % planes == 0 ? 0 : nyquist;
    return (rest / planes * bins + bin) * inner + in;
  }
};

struct Schedule {
  bool zero_out = false;     // no steps: the output is all zeros (an R2C of no points)
  bool copy_to_tmp = false;  // tmp = in (same shape) before the steps ...
  bool conj_copy = false;    // ... conjugated
  RealBins real_bins;        // C2R: imaginary parts zeroed in tmp before the C2R step
  PitchedCopy pitch_in;      // pitched = in, before the steps (R2C)
  std::vector<Step> steps;
  PitchedCopy pitch_out;     // out = pitched, after the steps (C2R)
  bool conj_out = false;     // out = conj(out) * scale after the steps
  double scale = 1.0;
  long long tmp_elems = 0;      // complex elements of the C2R input copy
  long long pitched_elems = 0;  // real elements of the pitched copy
};

// Where each part of a schedule's working memory lies in one buffer, in bytes.
struct Arena {
  long long tmp = 0, pitched = 0, work = 0, total = 0;  // offsets, and the size
};

inline long long AlignUp(long long v, long long a) { return (v + a - 1) / a * a; }

// The working memory of `s` for elements of `real_size` bytes (4 or 8) and a cuFFT work
// area of `work_bytes` (the largest any step's plan needs).
inline Arena Arrange(const Schedule &s, long long real_size, long long work_bytes) {
  Arena a;
  a.tmp = 0;
  a.pitched = AlignUp(s.tmp_elems * 2 * real_size, kArenaAlignBytes);
  a.work = a.pitched + AlignUp(s.pitched_elems * real_size, kArenaAlignBytes);
  a.total = a.work + AlignUp(work_bytes, kArenaAlignBytes);
  return a;
}

inline long long Prod(const std::vector<long long> &d, int from, int to) {  // [from, to)
  long long p = 1;
  for (int i = from; i < to; ++i) p *= d[i];
  return p;
}

struct Run {
  int a, b;  // first and last axis of a run of adjacent axes
};

// Sorted runs of adjacent axes, each at most three long, of `axes` without `skip`.
inline std::vector<Run> AdjacentRuns(std::vector<int> axes, int skip = -1) {
  axes.erase(std::remove(axes.begin(), axes.end(), skip), axes.end());
  std::sort(axes.begin(), axes.end());
  std::vector<Run> runs;
  for (int ax : axes) {
    if (!runs.empty() && runs.back().b == ax - 1 && ax - runs.back().a < 3)
      runs.back().b = ax;
    else
      runs.push_back({ax, ax});
  }
  return runs;
}

// Axes counted from the end resolved against ndim, in the order given. "" or an error.
inline std::string ResolveAxes(const int64_t *axes, size_t count, int ndim,
                               std::vector<int> &resolved) {
  resolved.clear();
  for (size_t i = 0; i < count; ++i) {
    int64_t r = axes[i] < 0 ? axes[i] + ndim : axes[i];
    if (r < 0 || r >= ndim) return "pfft: axis out of range";
    if (std::find(resolved.begin(), resolved.end(), int(r)) != resolved.end())
      return "pfft: repeated axis";
    resolved.push_back(int(r));
  }
  if (resolved.empty()) return "pfft: no axes to transform";
  return "";
}

// The plan and launches for axes [a..b] of a block of dims `din` (input) and `dout`
// (output; differs from din on axis b only, for R2C/C2R). `real_out`: C2R, whose
// logical lengths are the output's.
inline Layout RunLayout(const std::vector<long long> &din, const std::vector<long long> &dout,
                        int a, int b, bool real_out) {
  int ndim = static_cast<int>(din.size());
  long long outer = Prod(din, 0, a), inner = Prod(din, b + 1, ndim);
  long long run_in = Prod(din, a, b + 1), run_out = Prod(dout, a, b + 1);
  Layout l;
  l.rank = b - a + 1;
  const std::vector<long long> &logical = real_out ? dout : din;
  for (int i = 0; i < l.rank; ++i) l.n[i] = logical[a + i];
  bool batch_inner = inner >= outer;
  l.batch = batch_inner ? inner : outer;
  l.loops = batch_inner ? outer : inner;
  l.istride = l.ostride = inner;
  l.idist = batch_inner ? 1 : run_in * inner;
  l.odist = batch_inner ? 1 : run_out * inner;
  l.in_step = batch_inner ? run_in * inner : 1;
  l.out_step = batch_inner ? run_out * inner : 1;
  return l;
}

// The R2C (or, `real_out`, C2R) step over the halved axis h of a block `din` -> `dout`:
// one launch where the block has nothing before or after h; else one launch per outer
// index over a batch of the inner ones (never a loop over the inner ones: each launch
// would start one real element further, unaligned). Where the outer launches' real side
// would start unaligned, it is read from (R2C) or written to (C2R) a pitched copy,
// described in `copy`. `real_size`: bytes of a real element.
inline Layout RealLayout(const std::vector<long long> &din, const std::vector<long long> &dout,
                         int h, bool real_out, long long real_size, PitchedCopy &copy) {
  copy = PitchedCopy{};
  const std::vector<long long> &real = real_out ? dout : din;
  int ndim = static_cast<int>(din.size());
  long long outer = Prod(din, 0, h), inner = Prod(din, h + 1, ndim);
  if (outer == 1 || inner == 1) return RunLayout(din, dout, h, h, real_out);
  Layout l;
  l.rank = 1;
  l.n[0] = real[h];
  l.batch = inner;
  l.loops = outer;
  l.istride = l.ostride = inner;
  l.idist = l.odist = 1;
  long long line = real[h] * inner, bins = (real[h] / 2 + 1) * inner;
  long long align = kAlignBytes / real_size;
  long long real_step = line;
  if (line % align != 0) {
    real_step = AlignUp(line, align);
    copy = PitchedCopy{outer, line, real_step};
  }
  l.in_step = real_out ? bins : real_step;
  l.out_step = real_out ? real_step : bins;
  return l;
}

// The schedule of a handler: `kind` over `axes` (resolved, in the order given: the
// last is the halved axis of R2C/C2R) of a block `din` -> `dout`, with the sign of
// `forward` and a final scale, for real elements of `real_size` bytes (4 or 8). "" or
// an error (shapes that do not fit the kind).
inline std::string MakeSchedule(Kind kind, const std::vector<long long> &din,
                                const std::vector<long long> &dout,
                                const std::vector<int> &axes, bool forward, double scale,
                                long long real_size, Schedule &s) {
  s = Schedule{};
  s.scale = scale;
  if (axes.empty()) return "pfft: no axes to transform";
  if (din.size() != dout.size()) return "pfft: input and output ranks differ";
  int h = axes.back();
  for (size_t i = 0; i < din.size(); ++i) {
    bool halved = kind != Kind::kC2C && int(i) == h;
    if (!halved && din[i] != dout[i]) return "pfft: output shape differs from the input's";
  }
  if (kind == Kind::kR2C && dout[h] != din[h] / 2 + 1)
    return "pfft r2c: output must halve the last axis";
  if (kind == Kind::kC2R && din[h] != dout[h] / 2 + 1)
    return "pfft c2r: input must hold n//2+1 bins on the last axis";
  if (Prod(dout, 0, int(dout.size())) == 0) return "";  // nothing to write
  if (Prod(din, 0, int(din.size())) == 0) {  // an R2C over zero points: every bin 0
    s.zero_out = true;
    return "";
  }
  auto c2c_runs = [&](const std::vector<Run> &runs, const std::vector<long long> &dims,
                      int direction, Buffer first_src, Buffer dst) {
    for (size_t r = 0; r < runs.size(); ++r)
      s.steps.push_back({Kind::kC2C, direction,
                         RunLayout(dims, dims, runs[r].a, runs[r].b, false),
                         r == 0 ? first_src : dst, dst});
  };
  switch (kind) {
    case Kind::kC2C:
      c2c_runs(AdjacentRuns(axes), din, forward ? kForward : kInverse, Buffer::kIn,
               Buffer::kOut);
      break;
    case Kind::kR2C: {
      Layout l = RealLayout(din, dout, h, false, real_size, s.pitch_in);
      s.pitched_elems = s.pitch_in.rows * s.pitch_in.pitch;
      s.steps.push_back({Kind::kR2C, kForward, l,
                         s.pitch_in.rows ? Buffer::kPitched : Buffer::kIn, Buffer::kOut});
      c2c_runs(AdjacentRuns(axes, h), dout, kForward, Buffer::kOut, Buffer::kOut);
      s.conj_out = !forward;  // the + sign of a real input's transform: conj of the - sign
      break;
    }
    case Kind::kC2R: {
      // the - sign transform of Hermitian z is the + sign transform of conj(z)
      s.copy_to_tmp = true;
      s.conj_copy = forward;
      s.tmp_elems = Prod(din, 0, int(din.size()));
      c2c_runs(AdjacentRuns(axes, h), din, kInverse, Buffer::kTmp, Buffer::kTmp);
      s.real_bins = {Prod(din, 0, h), din[h], Prod(din, h + 1, int(din.size())),
                     dout[h] % 2 == 0 ? dout[h] / 2 : -1};
      Layout l = RealLayout(din, dout, h, true, real_size, s.pitch_out);
      s.pitched_elems = s.pitch_out.rows * s.pitch_out.pitch;
      s.steps.push_back({Kind::kC2R, kInverse, l, Buffer::kTmp,
                         s.pitch_out.rows ? Buffer::kPitched : Buffer::kOut});
      break;
    }
  }
  return "";
}

}  // namespace cufft_schedule
}  // namespace pfft
