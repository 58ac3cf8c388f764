// pfft CPU engine: one FFT pass that also unpacks and packs the pieces an exchange
// moves, so a distributed transform needs no copies of its own around a collective.
//
//   PfftPieces  one axis of a logical block that arrives as p_in pieces and leaves
//               as p_out pieces, transformed on the way: kind "c2c", "r2c" (real n
//               points -> n/2+1 bins), "c2r" (n/2+1 bins -> n real points), "r2r" (a
//               DCT or DST, n points -> n points: real, or complex as its real and
//               imaginary parts), or "copy" (no transform: the packing or unpacking
//               alone, real or complex)
//   PfftPiecesPair  two FFT passes in one call, along two different axes: "c2c" or
//               "r2c" along axis1, then "c2c" or "c2r" along axis2 (a slab's two
//               local axes). A thread takes a sub-block (cut along the axes neither
//               pass transforms and neither side is cut along) through both passes,
//               its intermediate in the thread's scratch, so the intermediate never
//               goes out to memory. Attributes kind1, axis1, n1, forward1, scale1,
//               weights1 and the same with 2 describe each pass as the attributes
//               below describe PfftPieces' one; in_split/out_split/signs and
//               nthreads are shared.
//
// The logical block (rank r, leading batch dimensions allowed) is cut into equal
// chunks along one axis on each side. Every piece is a row-major array of the
// block's shape with that axis replaced by the chunk length; piece k holds chunk
//
//     c = (me + sign * k) mod p        (sign 0: c = k)
//
// so that an exchange made of cyclic shifts (shift k sends piece k to the device k
// places on) needs no reordering: sign +1 orders pieces to send, sign -1 orders
// pieces received (piece k came from the device k places back). `me` is a runtime
// int32 operand [me_in, me_out] (this device's place along each mesh axis).
//
// Operands: me (int32[2]), then the input pieces.
// Attributes:
//   weights    float64 array: empty, or for c2c, r2c and c2r one factor per bin of
//              the complex side, applied after an r2c and before a c2r or c2c; for
//              r2r the end-point weights [pre_first, pre_last, post_first,
//              post_last]: the first and last input points are multiplied by the
//              pre pair before the transform, the first and last output points by
//              the post pair after it (n = 1: the one point takes both of a pair)
//   kind       "c2c", "r2c", "c2r", "r2r" or "copy"
//   type       int64, r2r only: the DCT/DST type, 1-4 (scipy's unnormalised
//              definitions: DUCC's dct/dst with ortho=false); ignored otherwise
//   sine       bool, r2r only: true for a DST, false for a DCT; ignored otherwise
//   axis       int64, the transform axis, negative (from the end)
//   n          int64, transform length (real points for r2c/c2r/r2r; points copied
//              for copy); pieces may hold more along `axis` (padding): extra input
//              points are ignored, extra output points written as 0
//   in_split, out_split   int64, negative axis each side is cut along (ignored
//              when that side has one piece)
//   in_sign, out_sign     int64, +1, -1 or 0 as above
//   forward, scale   as PfftC2C's (kernels/cpu/pfft_cpu.cc: unnormalised; scale
//              fused; forward is ignored by r2r and copy)
//   nthreads   int64, the threads the call runs on (less than 1: one)
// Along any other axis the output holds as much as the input; output points past
// the input's extent (padding of an axis about to be split) are written as 0.
// Every element of every output piece is written (both handlers): the transformed
// points, and 0 on all padding: nothing an output buffer held is kept (in place, the
// input's points there are read, then written over).
//
// In place: a c2c pass may write over its input (XLA's input_output_aliases, output
// piece k over input piece k) where both sides are cut along the transform axis into
// as many pieces of one shape: a group of lines reads every point of its lines before
// it writes any, and writes the same places it read (the chunks land in other pieces,
// never elsewhere). Any other overlap of input and output is refused.
//
// Work: lines along `axis` are taken in batches of neighbours along the innermost
// other axis (16 when the lines are contiguous in the input, else 64, so that strided
// reads use whole cache lines; pfft_cpu_set_pieces_batch overrides, up to 64). Each element is
// read once and written once; the output buffers get huge-page advice (huge_pages.h).
// - c2c, r2c, c2r: the lines of a batch go from the input pieces straight into DUCC's
//   SIMD layout (as many lines as a vector has lanes, one vector per point; then half
//   vectors, then single lines), are transformed there by DUCC's 1-D plan (fetched
//   once per call), and go straight from there to the output pieces: the two passes
//   over memory of DUCC's own strided transforms, with the pieces' unpacking and
//   packing in them. Where the lines are neighbours in memory (a strided transform
//   axis), several vectors' worth go at once, so that a point of the group spans two
//   whole cache lines, and real neighbours are read and written as whole vectors.
// - r2r on real pieces: the same, with DUCC's DCT/DST plan.
// - r2r on complex pieces, and copy: the batch is gathered into a scratch block,
//   transformed there by DUCC's DCT/DST (vectorised across the batch) or only scaled,
//   and scattered. A complex r2r views each complex line as two real lines (the
//   scratch block as a real array with a trailing axis of 2), so DUCC transforms both
//   parts in the same call.

#include <algorithm>
#include <atomic>
#include <complex>
#include <cstdlib>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ducc0/fft/fft.h"
#include "ducc0/fft/fftnd_impl.h"
#include "ducc0/infra/threading.h"
#include "huge_pages.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

constexpr size_t kMaxBatch = 64;
// lines per batch asked for by pfft_cpu_set_pieces_batch (0: the default, 16 or 64)
std::atomic<long> pieces_batch{0};

// One side (input or output): the pieces, their common shape, the cut.
struct Side {
  std::vector<char *> ptrs;
  std::vector<size_t> dims;       // of one piece
  std::vector<ptrdiff_t> strides;  // in elements
  size_t count = 1;
  int split = -1;                 // axis cut into pieces, -1 when one piece
  int64_t sign = 0, me = 0;

  size_t total(size_t a) const {
    return dims[a] * (static_cast<int>(a) == split ? count : 1);
  }
  size_t slot(size_t chunk) const {
    if (count == 1 || sign == 0) return chunk;
    int64_t k = sign > 0 ? static_cast<int64_t>(chunk) - me : me - static_cast<int64_t>(chunk);
    k %= static_cast<int64_t>(count);
    return static_cast<size_t>(k < 0 ? k + static_cast<int64_t>(count) : k);
  }
  // piece and element offset of logical coordinate `c` along axis `a`
  void locate(size_t a, size_t c, size_t &piece, ptrdiff_t &off) const {
    if (static_cast<int>(a) == split) {
      piece = slot(c / dims[a]);
      off = static_cast<ptrdiff_t>(c % dims[a]) * strides[a];
    } else {
      off = static_cast<ptrdiff_t>(c) * strides[a];
    }
  }
};

ffi::Error MakeSide(const std::vector<ffi::AnyBuffer> &bufs, int64_t split, int64_t sign,
                    int64_t me, Side &s, const char *what) {
  if (bufs.empty()) return ffi::Error::InvalidArgument(std::string("pfft pieces: no ") + what);
  auto d0 = bufs[0].dimensions();
  s.dims.assign(d0.begin(), d0.end());
  size_t r = s.dims.size();
  s.strides.assign(r, 1);
  for (size_t i = r; i-- > 1;) s.strides[i - 1] = s.strides[i] * static_cast<ptrdiff_t>(s.dims[i]);
  for (auto &b : bufs) {
    auto d = b.dimensions();
    if (d.size() != r || !std::equal(d.begin(), d.end(), s.dims.begin()) ||
        b.element_type() != bufs[0].element_type())
      return ffi::Error::InvalidArgument(std::string("pfft pieces: ") + what +
                                         " pieces differ in shape or type");
    s.ptrs.push_back(static_cast<char *>(b.untyped_data()));
  }
  s.count = bufs.size();
  int64_t a = split < 0 ? split + static_cast<int64_t>(r) : split;
  if (s.count > 1 && (a < 0 || a >= static_cast<int64_t>(r)))
    return ffi::Error::InvalidArgument(std::string("pfft pieces: ") + what + " split axis out of range");
  s.split = s.count > 1 ? static_cast<int>(a) : -1;
  if (s.count > 1 && sign != 0 && sign != 1 && sign != -1)
    return ffi::Error::InvalidArgument("pfft pieces: sign must be -1, 0 or +1");
  s.sign = sign;
  s.me = me;
  return ffi::Error::Success();
}

enum class Mode { kC2C, kR2C, kC2R, kR2R, kCopy };

// The transform of an r2r pass: DUCC's DCT (sine false) or DST of type 1-4.
struct R2RSpec {
  int type = 0;
  bool sine = false;
};

// The lines of one pass: the logical block's extents, the axes lines run over, and
// batches of kBatch neighbouring lines along the innermost other axis.
struct Walk {
  size_t f = 0;                       // the transform axis
  std::vector<size_t> extent, ext_out;  // input data (clipped to the output), output
  std::vector<size_t> others;         // non-transform axes, outermost first, but the
                                      // batch axis last
  bool has_batch_axis = false;
  size_t bx = 0, nb = 1, kBatch = 16, blocks = 1, outer = 1;

  Walk(const Side &in, const Side &out, size_t f_) : f(f_) {
    const size_t r = in.dims.size();
    extent.resize(r);
    ext_out.resize(r);
    for (size_t a = 0; a < r; ++a) {
      ext_out[a] = out.total(a);
      extent[a] = std::min(in.total(a), ext_out[a]);
    }
    for (size_t a = 0; a < r; ++a)
      if (a != f) others.push_back(a);
    // the batch axis: the innermost other axis that holds more than one line (a
    // sub-block of a pair call, or a user's block, may hold one along the innermost,
    // and batches of one line would run every line on its own, without vectors)
    for (size_t i = others.size(); i-- > 0;)
      if (ext_out[others[i]] > 1) {
        std::rotate(others.begin() + i, others.begin() + i + 1, others.end());
        break;
      }
    has_batch_axis = !others.empty();
    bx = has_batch_axis ? others.back() : 0;
    nb = has_batch_axis ? ext_out[bx] : 1;
    // neighbour lines per batch: enough to use whole cache lines when the axis is strided
    const long requested = pieces_batch.load(std::memory_order_relaxed);
    kBatch = requested > 0 ? std::min<size_t>(kMaxBatch, static_cast<size_t>(requested))
                           : (in.strides[f] == 1 ? 16 : 64);
    blocks = (nb + kBatch - 1) / kBatch;
    for (size_t i = 0; i + 1 < others.size(); ++i) outer *= ext_out[others[i]];
  }
};

// One batch of neighbouring lines: where each starts on each side.
struct Batch {
  size_t nl = 0;  // lines
  size_t nv = 0;  // lines with data: a prefix (padding lies past the data)
  size_t in_piece[kMaxBatch], out_piece[kMaxBatch];
  ptrdiff_t in_base[kMaxBatch], out_base[kMaxBatch];
  bool in_contig = true, out_contig = true;  // neighbours one element apart, one piece
};

// Fills `bt` with batch `item` of pass `w` (`coord`: scratch of the block's rank).
inline void FillBatch(const Side &in, const Side &out, const Walk &w, size_t item,
                      std::vector<size_t> &coord, Batch &bt) {
  bool valid[kMaxBatch];
  size_t blk = item % w.blocks, rest = item / w.blocks;
  for (size_t i = w.others.size() >= 2 ? w.others.size() - 1 : 0; i-- > 0;) {
    size_t a = w.others[i];
    coord[a] = rest % w.ext_out[a];
    rest /= w.ext_out[a];
  }
  size_t b0 = blk * w.kBatch;
  bt.nl = std::min(w.kBatch, w.nb - b0);
  for (size_t b = 0; b < bt.nl; ++b) {
    if (w.has_batch_axis) coord[w.bx] = b0 + b;
    size_t ip = 0, op = 0;
    ptrdiff_t ib = 0, ob = 0;
    bool ok = true;
    for (size_t a : w.others) {
      size_t p;
      ptrdiff_t o;
      if (coord[a] >= w.extent[a]) ok = false;
      if (ok) {
        p = 0;
        in.locate(a, coord[a], p, o);
        if (static_cast<int>(a) == in.split) ip = p;
        ib += o;
      }
      p = 0;
      out.locate(a, coord[a], p, o);
      if (static_cast<int>(a) == out.split) op = p;
      ob += o;
    }
    bt.in_piece[b] = ip, bt.out_piece[b] = op, bt.in_base[b] = ib, bt.out_base[b] = ob;
    valid[b] = ok;
  }
  bt.nv = 0;
  while (bt.nv < bt.nl && valid[bt.nv]) ++bt.nv;
  bt.in_contig = bt.out_contig = true;
  for (size_t b = 1; b < bt.nv; ++b)
    bt.in_contig &= bt.in_piece[b] == bt.in_piece[0] &&
                    bt.in_base[b] == bt.in_base[0] + ptrdiff_t(b);
  for (size_t b = 1; b < bt.nl; ++b)
    bt.out_contig &= bt.out_piece[b] == bt.out_piece[0] &&
                     bt.out_base[b] == bt.out_base[0] + ptrdiff_t(b);
}

// Calls work(batch) for every batch of the pass, on `nthreads` threads;
// make_worker() gives each thread its own worker (and scratch).
template <typename MakeWorker>
void ForEachBatch(const Side &in, const Side &out, const Walk &w, size_t nthreads,
                  MakeWorker make_worker) {
  const size_t r = in.dims.size();
  ducc0::execDynamic(w.outer * w.blocks, nthreads, 1, [&](ducc0::Scheduler &sched) {
    auto work = make_worker();
    std::vector<size_t> coord(r, 0);
    Batch bt;
    while (auto range = sched.getNext())
      for (size_t item = range.lo; item < range.hi; ++item) {
        FillBatch(in, out, w, item, coord, bt);
        work(bt);
      }
  });
}

// Where each point along the transform axis lies on one side: piece and offset.
struct AxisMap {
  std::vector<size_t> piece;
  std::vector<ptrdiff_t> offset;
  bool split = false;  // the side is cut along the transform axis
  bool unit = false;   // the axis is contiguous in one piece
  // Cut along the transform axis: where each run of points that lie next to each
  // other in one piece starts (and, last, the end), if the runs average 8 points or
  // more; else empty.
  std::vector<size_t> runs;

  AxisMap(const Side &s, size_t f, size_t points)
      : piece(points, 0), offset(points),
        split(s.split == static_cast<int>(f)),
        unit(s.strides[f] == 1 && s.split != static_cast<int>(f)) {
    for (size_t t = 0; t < points; ++t) s.locate(f, t, piece[t], offset[t]);
    if (!split) return;
    for (size_t t = 0; t < points; ++t)
      if (t == 0 || piece[t] != piece[t - 1] || offset[t] != offset[t - 1] + 1)
        runs.push_back(t);
    runs.push_back(points);
    if (8 * (runs.size() - 1) > points) runs.clear();
  }
};

// ---------------------------------------------------------------------------------
// FFT passes (c2c, r2c, c2r) and r2r passes of real data: lines go straight from the
// input pieces into DUCC's SIMD layout (L lines in the lanes of one vector per point),
// are transformed there by a plan fetched once per pass, and go straight to the output
// pieces: two passes over memory, as DUCC's own strided transforms make, and no
// per-batch DUCC set-up.

template <typename T, size_t L>
using Lanes = std::conditional_t<(L > 1), typename ducc0::simd_select<T, int(L)>::type, T>;

template <typename V, typename T>
inline void SetLane(V &v, size_t j, T x) {
  if constexpr (std::is_arithmetic_v<V>) v = x;
  else v[j] = x;
}

template <typename V>
inline auto GetLane(const V &v, size_t j) {
  if constexpr (std::is_arithmetic_v<V>) return v;
  else return static_cast<typename V::value_type>(v[j]);
}

// What every FFT pass needs besides its lines.
template <typename T>
struct FftPass {
  Mode mode;
  size_t n;             // transform length (real points for r2c and c2r)
  size_t n_in, n_out;   // points per line read and transformed, each side
  size_t n_tot;         // points per line written (zeros past n_out)
  bool forward;
  T scale;
  std::vector<T> weights;  // per bin of the complex side (r2r: the end points), or empty
  R2RSpec r2r;             // r2r only
  const Side *in, *out;
  const AxisMap *in_f, *out_f;
};

// K sets of L lanes: K * L lines per group, so that where the lines are neighbours in
// memory a group's point t spans whole cache lines (8 float32 lanes in a 256-bit
// vector fill half of one: reading or writing the other half a group later made a
// strided DCT pass 1.6x slower). Each set is transformed on its own.
template <typename T, typename Tin, typename Tout, size_t L, size_t K>
class LaneGroup {
  static constexpr bool kCin = !std::is_same_v<Tin, T>;
  static constexpr bool kCout = !std::is_same_v<Tout, T>;
  static constexpr size_t kLines = L * K;
  using V = Lanes<T, L>;
  using VC = ducc0::Cmplx<V>;

 public:
  explicit LaneGroup(const FftPass<T> &p)
      : p_(p),
        cin_(kCin ? K * p.n_in : 0), rbuf_(p.mode == Mode::kC2C ? 0 : K * p.n),
        cout_(p.mode == Mode::kR2C ? K * p.n_out : 0) {
    namespace fft = ducc0::detail_fft;
    if (p.mode == Mode::kC2C) {
      cplan_ = fft::get_plan<fft::pocketfft_c<T>>(p.n, false);
      tmp_size_ = cplan_->bufsize();
      tmp_c_ = ducc0::aligned_array<VC>(K * tmp_size_);
    } else {
      if (p.mode != Mode::kR2R)
        tmp_size_ = (rplan_ = fft::get_plan<fft::pocketfft_r<T>>(p.n, false))->bufsize();
      else if (p.r2r.type == 1 && !p.r2r.sine)
        tmp_size_ = (dct1_ = fft::get_plan<fft::T_dct1<T>>(p.n, false))->bufsize();
      else if (p.r2r.type == 1)
        tmp_size_ = (dst1_ = fft::get_plan<fft::T_dst1<T>>(p.n, false))->bufsize();
      else if (p.r2r.type == 4)
        tmp_size_ = (dcst4_ = fft::get_plan<fft::T_dcst4<T>>(p.n, false))->bufsize();
      else
        tmp_size_ = (dcst23_ = fft::get_plan<fft::T_dcst23<T>>(p.n, false))->bufsize();
      tmp_r_ = ducc0::aligned_array<V>(K * tmp_size_);
    }
  }

  // Transforms lines b, b + K * L, ... of the batch while K * L of them are left with
  // data; returns the first line not done.
  size_t Run(size_t b, const Batch &bt) {
    for (; b + kLines <= bt.nv; b += kLines) {
      // fetch the next group's lines (kLines on in the batch) while this group is
      // read, transformed and written (ForLanes)
      const size_t ahead = b + 2 * kLines <= bt.nv ? kLines : 0;
      Gather(b, bt, ahead);
      if constexpr (kCout) {
        const VC *res[K];
        for (size_t k = 0; k < K; ++k) res[k] = ToComplex(k);
        ScatterComplex(res, b, bt, ahead);
      } else {
        const V *res[K];
        for (size_t k = 0; k < K; ++k) res[k] = ToReal(k);
        ScatterReal(res, b, bt, ahead);
      }
    }
    return b;
  }

 private:
  // Set k's transform, for the passes with a complex output: c2c and r2c.
  const VC *ToComplex(size_t k) {
    if (p_.mode == Mode::kC2C) {
      VC *in = cin_.data() + k * p_.n_in;
      Weigh(in, p_.n_in);
      return cplan_->exec(in, tmp_c_.data() + k * tmp_size_, p_.scale, p_.forward, 1);
    }
    const size_t n = p_.n;
    V *res = rplan_->exec(rbuf_.data() + k * n, tmp_r_.data() + k * tmp_size_, p_.scale,
                          true, 1);
    VC *bins = cout_.data() + k * p_.n_out;
    bins[0].r = res[0];
    bins[0].i = V(T(0));
    size_t i = 1, j = 1;
    for (; i + 1 < n; i += 2, ++j) {
      bins[j].r = res[i];
      bins[j].i = p_.forward ? res[i + 1] : -res[i + 1];
    }
    if (i < n) {
      bins[j].r = res[i];
      bins[j].i = V(T(0));
    }
    Weigh(bins, p_.n_out);
    return bins;
  }

  // Set k's transform, for the passes with a real output: c2r and r2r.
  const V *ToReal(size_t k) {
    const size_t n = p_.n;
    V *c = rbuf_.data() + k * n, *buf = tmp_r_.data() + k * tmp_size_;
    const T s = p_.scale;
    if (p_.mode == Mode::kR2R) {
      const auto &w = p_.weights;  // [pre_first, pre_last, post_first, post_last]
      if (!w.empty()) {
        c[0] *= w[0];
        c[n - 1] *= w[1];
      }
      const int type = p_.r2r.type;
      const bool cosine = !p_.r2r.sine;
      V *res = dct1_    ? dct1_->exec(c, buf, s, false, type, cosine, 1)
               : dst1_  ? dst1_->exec(c, buf, s, false, type, cosine, 1)
               : dcst4_ ? dcst4_->exec(c, buf, s, false, type, cosine, 1)
                        : dcst23_->exec(c, buf, s, false, type, cosine, 1);
      if (!w.empty()) {
        res[0] *= w[2];
        res[n - 1] *= w[3];
      }
      return res;
    }
    VC *bins = cin_.data() + k * p_.n_in;  // c2r
    Weigh(bins, p_.n_in);
    c[0] = bins[0].r;
    size_t i = 1, j = 1;
    for (; i + 1 < n; i += 2, ++j) {
      c[i] = bins[j].r;
      c[i + 1] = p_.forward ? -bins[j].i : bins[j].i;
    }
    if (i < n) c[i] = bins[j].r;
    return rplan_->exec(c, buf, s, false, 1);
  }

  // The per-bin weights of the complex side (if any) on its `count` bins.
  void Weigh(VC *bins, size_t count) const {
    if (p_.weights.empty()) return;
    for (size_t t = 0; t < count; ++t) {
      bins[t].r *= p_.weights[t];
      bins[t].i *= p_.weights[t];
    }
  }

  // visit(t, j, element) for point t of lane j (line b + j of the batch, j < K * L),
  // for every point of every lane, point by point: the lanes' points are neighbours
  // in memory (`contig`), or the side is cut along the transform axis (point t's
  // piece and offset, plus each line's base), or each line lies in one piece (its own
  // start, plus point t's offset).
  template <typename E, typename Visit>
  static void ForLanes(const Side &s, const AxisMap &m, const size_t *piece,
                       const ptrdiff_t *base, bool contig, size_t points, size_t ahead,
                       Visit visit) {
    if (contig) {  // the lines are neighbours in one piece: point t of all at once
      for (size_t t = 0; t < points; ++t) {
        E *src = Row<E>(s, m, piece, base, t);
        if (ahead) Prefetch(src + ahead);
        for (size_t j = 0; j < kLines; ++j) visit(t, j, src[j]);
      }
    } else if (m.split && !m.runs.empty()) {
      // each line is contiguous within a piece: a run at a time, as in one piece
      for (size_t r = 0; r + 1 < m.runs.size(); ++r) {
        const size_t t0 = m.runs[r];
        E *start = reinterpret_cast<E *>(s.ptrs[m.piece[t0]]) + m.offset[t0];
        E *lane[kLines], *next[kLines] = {};
        for (size_t j = 0; j < kLines; ++j) lane[j] = start + base[j];
        if (ahead)
          for (size_t j = 0; j < kLines; ++j) next[j] = start + base[ahead + j];
        Stream(lane, ahead ? next : nullptr, t0, m.runs[r + 1], visit);
      }
    } else if (m.split) {
      for (size_t t = 0; t < points; ++t) {
        E *row = reinterpret_cast<E *>(s.ptrs[m.piece[t]]) + m.offset[t];
        for (size_t j = 0; j < kLines; ++j) visit(t, j, row[base[j]]);
      }
    } else {
      E *lane[kLines];
      for (size_t j = 0; j < kLines; ++j)
        lane[j] = reinterpret_cast<E *>(s.ptrs[piece[j]]) + base[j];
      if (m.unit) {
        E *next[kLines] = {};
        if (ahead)
          for (size_t j = 0; j < kLines; ++j)
            next[j] = reinterpret_cast<E *>(s.ptrs[piece[ahead + j]]) + base[ahead + j];
        Stream(lane, ahead ? next : nullptr, 0, points, visit);
      } else {
        for (size_t t = 0; t < points; ++t) {
          const ptrdiff_t off = m.offset[t];
          for (size_t j = 0; j < kLines; ++j) visit(t, j, lane[j][off]);
        }
      }
    }
  }

  // visit(t, j, element) for points t0 <= t < t1 of kLines lines, each contiguous from
  // lane[j] (which holds point t0); with `next`, the next group's lines (from next[j])
  // are fetched a cache line at a time.
  template <typename E, typename Visit>
  static void Stream(E *const *lane, E *const *next, size_t t0, size_t t1, Visit &visit) {
    constexpr size_t kPerLine = std::max<size_t>(1, 64 / sizeof(E));
    for (size_t t = t0; t < t1; ++t) {
      const size_t u = t - t0;
      if (next && u % kPerLine == 0)
        for (size_t j = 0; j < kLines; ++j) Prefetch1(next[j] + u);
      for (size_t j = 0; j < kLines; ++j) visit(t, j, lane[j][u]);
    }
  }

  // Starts fetching point t of kLines neighbouring lines at `p` into cache, for reading
  // (const E) or writing. Inside a plan a pass's input and output exceed the last-level
  // cache, and a strided row a page or more from the last is past what the hardware
  // prefetchers follow.
  template <typename E>
  static void Prefetch(E *p) {
    const char *c = reinterpret_cast<const char *>(p);
    for (size_t o = 0; o < kLines * sizeof(E); o += 64) Prefetch1(c + o);
  }
  // One cache line at `p`, for reading (const E) or writing.
  template <typename E>
  static void Prefetch1(E *p) {
    __builtin_prefetch(p, std::is_const_v<E> ? 0 : 1, 3);
  }

  // Point t of neighbouring lines: where the first of them holds it.
  template <typename E>
  static E *Row(const Side &s, const AxisMap &m, const size_t *piece, const ptrdiff_t *base,
                size_t t) {
    return reinterpret_cast<E *>(s.ptrs[m.split ? m.piece[t] : piece[0]]) + base[0] +
           m.offset[t];
  }

  void Gather(size_t b, const Batch &bt, size_t ahead) {
    if constexpr (!kCin && L > 1) {
      if (bt.in_contig) {  // real neighbours: whole vectors
        for (size_t t = 0; t < p_.n_in; ++t) {
          const T *src = Row<const T>(*p_.in, *p_.in_f, bt.in_piece + b, bt.in_base + b, t);
          if (ahead) Prefetch(src + ahead);
          for (size_t k = 0; k < K; ++k) rbuf_[k * p_.n + t] = ducc0::loadu<V>(src + k * L);
        }
        return;
      }
    }
    const size_t n_in = p_.n_in, n = p_.n;
    ForLanes<const Tin>(*p_.in, *p_.in_f, bt.in_piece + b, bt.in_base + b, bt.in_contig,
                        n_in, ahead, [this, n_in, n](size_t t, size_t j, const Tin &x) {
                          const size_t k = j / L, lane = j % L;
                          if constexpr (kCin) {
                            VC &y = cin_[k * n_in + t];
                            SetLane(y.r, lane, x.real());
                            SetLane(y.i, lane, x.imag());
                          } else {
                            SetLane(rbuf_[k * n + t], lane, x);
                          }
                        });
  }

  void ScatterComplex(const VC *const *res, size_t b, const Batch &bt, size_t ahead) {
    if constexpr (kCout) {
      const size_t n_out = p_.n_out;
      ForLanes<Tout>(*p_.out, *p_.out_f, bt.out_piece + b, bt.out_base + b, bt.out_contig,
                     p_.n_tot, ahead, [res, n_out](size_t t, size_t j, Tout &y) {
                       const VC *r = res[j / L];
                       y = t < n_out ? Tout(GetLane(r[t].r, j % L), GetLane(r[t].i, j % L))
                                     : Tout(0);
                     });
    }
  }
  void ScatterReal(const V *const *res, size_t b, const Batch &bt, size_t ahead) {
    if constexpr (!kCout) {
      const size_t n_out = p_.n_out;
      if constexpr (L > 1) {
        if (bt.out_contig) {  // real neighbours: whole vectors
          for (size_t t = 0; t < p_.n_tot; ++t) {
            T *dst = Row<T>(*p_.out, *p_.out_f, bt.out_piece + b, bt.out_base + b, t);
            if (ahead) Prefetch(dst + ahead);
            for (size_t k = 0; k < K; ++k)
              ducc0::storeu(t < n_out ? res[k][t] : V(T(0)), dst + k * L);
          }
          return;
        }
      }
      ForLanes<Tout>(*p_.out, *p_.out_f, bt.out_piece + b, bt.out_base + b, bt.out_contig,
                     p_.n_tot, ahead, [res, n_out](size_t t, size_t j, Tout &y) {
                       y = t < n_out ? Tout(GetLane(res[j / L][t], j % L)) : Tout(0);
                     });
    }
  }

  const FftPass<T> &p_;
  ducc0::aligned_array<VC> cin_;    // complex input (c2c, c2r), K sets of n_in
  ducc0::aligned_array<V> rbuf_;    // real lines (r2c, r2r input, c2r halfcomplex), K sets
  ducc0::aligned_array<VC> cout_;   // r2c output bins, K sets of n_out
  size_t tmp_size_ = 0;             // a plan's scratch per set
  ducc0::aligned_array<VC> tmp_c_;
  ducc0::aligned_array<V> tmp_r_;
  std::shared_ptr<ducc0::detail_fft::pocketfft_c<T>> cplan_;
  std::shared_ptr<ducc0::detail_fft::pocketfft_r<T>> rplan_;
  std::shared_ptr<ducc0::detail_fft::T_dct1<T>> dct1_;
  std::shared_ptr<ducc0::detail_fft::T_dst1<T>> dst1_;
  std::shared_ptr<ducc0::detail_fft::T_dcst4<T>> dcst4_;
  std::shared_ptr<ducc0::detail_fft::T_dcst23<T>> dcst23_;
};

// A thread's FFT worker: groups of the widest vector (several sets of it at once
// where the lines are neighbours and one set would fill part of a cache line), then
// of half of it, then single lines; then zeros on the lines that hold only padding.
template <typename T, typename Tin, typename Tout>
class FftWorker {
  static constexpr size_t kV = ducc0::native_simd<T>::size();
  static constexpr size_t kHalf = (kV >= 4 && ducc0::simd_exists<T, int(kV / 2)>) ? kV / 2 : 1;
  // the sets of kV lanes whose point t spans two 64-byte cache lines on the side with
  // the larger element (two rather than one or four: the fastest measured), and at
  // least 16 lines a group (float64 with a complex side: four sets of 4 lanes, point t
  // spanning four cache lines; faster on data that comes from memory, as inside a plan)
  static constexpr size_t kElem =
      (std::is_same_v<Tin, T> && std::is_same_v<Tout, T>) ? sizeof(T) : 2 * sizeof(T);
  static constexpr size_t kSets =
      std::clamp<size_t>(std::max<size_t>(16 / kV, 128 / (kV * kElem)), 1, 4);
  // the sets' lines and DUCC's scratch (each at most n complex vectors) must stay in
  // L2: longer lines take one set
  static constexpr size_t kSetsBudget = size_t(512) << 10;

 public:
  explicit FftWorker(const FftPass<T> &p) : p_(p), wide_(p), half_(p), one_(p) {
    const size_t set_bytes = 2 * p.n * sizeof(ducc0::Cmplx<Lanes<T, kV>>);
    if (kV > 1 && kSets > 1 && kSets * set_bytes <= kSetsBudget) full_.emplace(p);
  }

  void operator()(const Batch &bt) {
    size_t b = 0;
    if (full_ && (bt.in_contig || bt.out_contig)) b = full_->Run(b, bt);
    if constexpr (kV > 1) b = wide_.Run(b, bt);
    if constexpr (kHalf > 1) b = half_.Run(b, bt);
    b = one_.Run(b, bt);
    for (size_t line = bt.nv; line < bt.nl; ++line)  // padding lines
      for (size_t t = 0; t < p_.n_tot; ++t) {
        const Side &s = *p_.out;
        size_t piece = p_.out_f->split ? p_.out_f->piece[t] : bt.out_piece[line];
        reinterpret_cast<Tout *>(s.ptrs[piece])[bt.out_base[line] + p_.out_f->offset[t]] =
            Tout(0);
      }
  }

 private:
  const FftPass<T> &p_;
  std::optional<LaneGroup<T, Tin, Tout, kV, kSets>> full_;
  LaneGroup<T, Tin, Tout, kV, 1> wide_;
  LaneGroup<T, Tin, Tout, kHalf, 1> half_;
  LaneGroup<T, Tin, Tout, 1, 1> one_;
};

template <typename T, typename Tin, typename Tout>
void RunFft(const Side &in, const Side &out, size_t f, Mode mode, size_t n, size_t n_in,
            size_t n_out, bool forward, double scale, const std::vector<double> &weights,
            R2RSpec r2r, size_t nthreads) {
  Walk w(in, out, f);
  AxisMap in_f(in, f, n_in), out_f(out, f, w.ext_out[f]);
  FftPass<T> p{mode, n, n_in, n_out, w.ext_out[f], forward, static_cast<T>(scale),
               std::vector<T>(weights.begin(), weights.end()), r2r, &in, &out, &in_f, &out_f};
  ForEachBatch(in, out, w, nthreads, [&] { return FftWorker<T, Tin, Tout>(p); });
}

// One FFT pass of a pair (PfftPiecesPair): its axis, kind, lengths, sign, scale and
// per-bin weights of the complex side (or none).
struct PassSpec {
  size_t f = 0;
  Mode mode = Mode::kC2C;
  size_t n = 0, n_in = 0, n_out = 0;
  bool forward = true;
  double scale = 1.0;
  std::vector<double> weights;
};

// A side of one piece: a row-major block of `dims` at `ptr`.
inline Side WholeSide(const std::vector<size_t> &dims, char *ptr) {
  Side s;
  s.dims = dims;
  s.strides.assign(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;)
    s.strides[i - 1] = s.strides[i] * static_cast<ptrdiff_t>(dims[i]);
  s.ptrs = {ptr};
  return s;
}

// Two FFT passes in one call: along s1.f (c2c or r2c), then along s2.f (c2c or c2r),
// the same result as two calls through an intermediate block. The block is cut into
// sub-blocks along every axis that neither pass transforms and neither side is cut
// along; a thread takes a sub-block through both passes with its intermediate in the
// thread's own scratch (in cache), so the intermediate never goes out to memory: the
// input is read once and the output written once, where two calls read and write
// the intermediate once more. With no such axis (or fewer sub-blocks than twice the
// threads) the two passes run whole, through a temporary.
template <typename T, typename Tin, typename Tmid, typename Tout>
void RunFftPair(const Side &in, const Side &out, const PassSpec &s1, const PassSpec &s2,
                size_t nthreads) {
  const size_t r = in.dims.size();
  // the intermediate: pass 1's output along s1.f, what pass 2 reads along s2.f, and
  // elsewhere the data both sides hold
  std::vector<size_t> mid(r);
  for (size_t a = 0; a < r; ++a) mid[a] = std::min(in.total(a), out.total(a));
  mid[s1.f] = out.total(s1.f);
  mid[s2.f] = s2.n_in;
  std::vector<size_t> sub;  // the axes sub-blocks are cut along, outermost first
  size_t nsub = 1;
  for (size_t a = 0; a < r; ++a)
    if (a != s1.f && a != s2.f && static_cast<int>(a) != in.split &&
        static_cast<int>(a) != out.split && in.total(a) >= out.total(a)) {
      sub.push_back(a);
      nsub *= out.total(a);
    }
  auto run = [](const PassSpec &s, const Side &a, const Side &b, size_t threads, auto tag_in,
                auto tag_out) {
    using I = decltype(tag_in);
    using O = decltype(tag_out);
    RunFft<T, I, O>(a, b, s.f, s.mode, s.n, s.n_in, s.n_out, s.forward, s.scale, s.weights,
                    R2RSpec{}, threads);
  };
  if (sub.empty() || nsub < 2 * nthreads) {
    size_t count = 1;
    for (size_t d : mid) count *= d;
    std::vector<Tmid> tmp(count);
    Side m = WholeSide(mid, reinterpret_cast<char *>(tmp.data()));
    run(s1, in, m, nthreads, Tin{}, Tmid{});
    run(s2, m, out, nthreads, Tmid{}, Tout{});
    return;
  }
  auto pass = [](const PassSpec &s, const Side &a, const Side &b, const AxisMap &fa,
                 const AxisMap &fb, size_t n_tot) {
    return FftPass<T>{s.mode, s.n, s.n_in, s.n_out, n_tot, s.forward, static_cast<T>(s.scale),
                      std::vector<T>(s.weights.begin(), s.weights.end()), R2RSpec{},
                      &a, &b, &fa, &fb};
  };
  ducc0::execDynamic(nsub, nthreads, 1, [&](ducc0::Scheduler &sched) {
    Side in_s = in, out_s = out;
    std::vector<size_t> md = mid;
    for (size_t a : sub) in_s.dims[a] = out_s.dims[a] = md[a] = 1;
    size_t count = 1;
    for (size_t d : md) count *= d;
    std::vector<Tmid> buf(count);
    const Side m = WholeSide(md, reinterpret_cast<char *>(buf.data()));
    const Walk w1(in_s, m, s1.f), w2(m, out_s, s2.f);
    const AxisMap f1_in(in_s, s1.f, s1.n_in), f1_out(m, s1.f, w1.ext_out[s1.f]);
    const AxisMap f2_in(m, s2.f, s2.n_in), f2_out(out_s, s2.f, w2.ext_out[s2.f]);
    const FftPass<T> p1 = pass(s1, in_s, m, f1_in, f1_out, w1.ext_out[s1.f]);
    const FftPass<T> p2 = pass(s2, m, out_s, f2_in, f2_out, w2.ext_out[s2.f]);
    FftWorker<T, Tin, Tmid> first(p1);
    FftWorker<T, Tmid, Tout> second(p2);
    std::vector<size_t> coord(r, 0);
    Batch bt;
    while (auto range = sched.getNext())
      for (size_t item = range.lo; item < range.hi; ++item) {
        ptrdiff_t off_in = 0, off_out = 0;  // the sub-block's corner, in elements
        size_t rest = item;
        for (size_t i = sub.size(); i-- > 0;) {
          const size_t a = sub[i], c = rest % out.total(a);
          rest /= out.total(a);
          off_in += static_cast<ptrdiff_t>(c) * in.strides[a];
          off_out += static_cast<ptrdiff_t>(c) * out.strides[a];
        }
        for (size_t k = 0; k < in.ptrs.size(); ++k)
          in_s.ptrs[k] = in.ptrs[k] + off_in * static_cast<ptrdiff_t>(sizeof(Tin));
        for (size_t k = 0; k < out.ptrs.size(); ++k)
          out_s.ptrs[k] = out.ptrs[k] + off_out * static_cast<ptrdiff_t>(sizeof(Tout));
        for (size_t it = 0; it < w1.outer * w1.blocks; ++it) {
          FillBatch(in_s, m, w1, it, coord, bt);
          first(bt);
        }
        for (size_t it = 0; it < w2.outer * w2.blocks; ++it) {
          FillBatch(m, out_s, w2, it, coord, bt);
          second(bt);
        }
      }
  });
}

// ---------------------------------------------------------------------------------
// r2r passes on complex data, and copy passes: lines gathered into a scratch block
// (line-major when contiguous in the input, else point-major), transformed there by
// DUCC's DCT/DST (vectorised across the batch) or only scaled, and scattered to the
// output pieces.
// `weights` are the four end-point weights of an r2r pass (or empty).
template <typename T, typename Tin>
void RunScratch(const Side &in, const Side &out, size_t f, Mode mode, size_t n,
                double scale, const std::vector<double> &weights, R2RSpec r2r,
                size_t nthreads) {
  using Tout = Tin;
  Walk w(in, out, f);
  const size_t n_in = n, n_out = n, n_tot = w.ext_out[f], kBatch = w.kBatch;
  AxisMap in_f(in, f, n_in), out_f(out, f, n_tot);
  const bool line_major = in_f.unit;

  ForEachBatch(in, out, w, nthreads, [&] {
    return [&, bin = std::vector<Tin>(n_in * kBatch)](const Batch &bt) mutable {
      Tin *bout = bin.data();
      const size_t ldi = line_major ? n_in : kBatch;
      auto in_at = [&](size_t b, size_t t) -> Tin & {
        return line_major ? bin[b * n_in + t] : bin[t * kBatch + b];
      };
      auto out_at = [&](size_t b, size_t t) -> Tout & {
        return line_major ? bout[b * n_out + t] : bout[t * kBatch + b];
      };
      const size_t nv = bt.nv, nl = bt.nl;
      // gather
      if (line_major) {
        for (size_t b = 0; b < nv; ++b)
          std::copy_n(reinterpret_cast<const Tin *>(in.ptrs[bt.in_piece[b]]) + bt.in_base[b],
                      n_in, &bin[b * n_in]);
      } else {
        for (size_t t = 0; t < n_in; ++t) {
          Tin *row = &bin[t * kBatch];
          if (bt.in_contig) {
            size_t p = in_f.split ? in_f.piece[t] : bt.in_piece[0];
            std::copy_n(reinterpret_cast<const Tin *>(in.ptrs[p]) + bt.in_base[0] +
                            in_f.offset[t], nv, row);
          } else {
            for (size_t b = 0; b < nv; ++b) {
              size_t p = in_f.split ? in_f.piece[t] : bt.in_piece[b];
              row[b] = reinterpret_cast<const Tin *>(in.ptrs[p])[bt.in_base[b] + in_f.offset[t]];
            }
          }
        }
      }
      // transform
      if (nv > 0 && mode == Mode::kR2R) {
        if (!weights.empty())
          for (size_t b = 0; b < nv; ++b) {
            in_at(b, 0) *= static_cast<T>(weights[0]);
            in_at(b, n_in - 1) *= static_cast<T>(weights[1]);
          }
        // a complex line is two real lines: the scratch as a real array with a
        // trailing axis of 2 (of 1 for real data)
        constexpr size_t parts = sizeof(Tin) / sizeof(T);
        const size_t ax = line_major ? 1 : 0;
        auto shape = line_major ? ducc0::fmav_info::shape_t{nv, n_in, parts}
                                : ducc0::fmav_info::shape_t{n_in, nv, parts};
        ducc0::fmav_info::stride_t str{ptrdiff_t(ldi * parts), ptrdiff_t(parts), 1};
        T *raw = reinterpret_cast<T *>(bin.data());
        ducc0::cfmav<T> src(raw, shape, str);
        ducc0::vfmav<T> dst(raw, shape, str);
        if (r2r.sine)
          ducc0::dst(src, dst, {ax}, r2r.type, static_cast<T>(scale), false, 1);
        else
          ducc0::dct(src, dst, {ax}, r2r.type, static_cast<T>(scale), false, 1);
        if (!weights.empty())
          for (size_t b = 0; b < nv; ++b) {
            out_at(b, 0) *= static_cast<T>(weights[2]);
            out_at(b, n_out - 1) *= static_cast<T>(weights[3]);
          }
      } else if (nv > 0 && scale != 1.0) {
        for (size_t b = 0; b < nv; ++b)
          for (size_t t = 0; t < n_out; ++t) out_at(b, t) *= static_cast<T>(scale);
      }
      // scatter (zeros past n_out and on padding lines)
      const Tout zero(0);
      if (out_f.unit) {
        for (size_t b = 0; b < nl; ++b) {
          Tout *dst = reinterpret_cast<Tout *>(out.ptrs[bt.out_piece[b]]) + bt.out_base[b];
          if (b >= nv) {
            std::fill_n(dst, n_tot, zero);
          } else if (line_major) {
            std::copy_n(&bout[b * n_out], n_out, dst);
            std::fill_n(dst + n_out, n_tot - n_out, zero);
          } else {
            for (size_t t = 0; t < n_out; ++t) dst[t] = bout[t * kBatch + b];
            std::fill_n(dst + n_out, n_tot - n_out, zero);
          }
        }
      } else {
        for (size_t t = 0; t < n_tot; ++t) {
          if (bt.out_contig) {
            size_t p = out_f.split ? out_f.piece[t] : bt.out_piece[0];
            Tout *dst = reinterpret_cast<Tout *>(out.ptrs[p]) + bt.out_base[0] + out_f.offset[t];
            if (t >= n_out) {
              std::fill_n(dst, nl, zero);
            } else if (!line_major) {
              std::copy_n(&bout[t * kBatch], nv, dst);
              std::fill_n(dst + nv, nl - nv, zero);
            } else {
              for (size_t b = 0; b < nv; ++b) dst[b] = out_at(b, t);
              std::fill_n(dst + nv, nl - nv, zero);
            }
          } else {
            for (size_t b = 0; b < nl; ++b) {
              size_t p = out_f.split ? out_f.piece[t] : bt.out_piece[b];
              reinterpret_cast<Tout *>(out.ptrs[p])[bt.out_base[b] + out_f.offset[t]] =
                  (b < nv && t < n_out) ? out_at(b, t) : zero;
            }
          }
        }
      }
    };
  });
}

// A call's operands as every handler uses them: the two sides the input and output
// pieces make, their element types, and the output buffers (for the huge-page advice).
struct Operands {
  Side in, out;
  ffi::DataType ti, to;
  std::vector<ffi::AnyBuffer> outs;
  bool overlap = false;  // an output shares memory with an input (aliased)

  void AdviseHugePages() const {
    for (auto &b : outs) pfft::AdviseHugePages(b.untyped_data(), b.size_bytes());
  }
};

// Reads and checks a call's operands alike for every handler: `me` ([me_in, me_out]),
// the input and output pieces and the two sides they make, of one rank.
ffi::Error ReadSides(ffi::Buffer<ffi::S32> me, ffi::RemainingArgs args, ffi::RemainingRets rets,
                     int64_t in_split, int64_t in_sign, int64_t out_split, int64_t out_sign,
                     Operands &ops) {
  std::vector<ffi::AnyBuffer> ins, &outs = ops.outs;
  Side &in = ops.in, &out = ops.out;
  if (me.element_count() < 2)
    return ffi::Error::InvalidArgument("pfft pieces: `me` must hold [me_in, me_out]");
  const int32_t *mev = me.typed_data();
  for (size_t i = 0; i < args.size(); ++i) {
    auto b = args.get<ffi::AnyBuffer>(i);
    if (b.has_error()) return b.error();
    ins.push_back(*b);
  }
  for (size_t i = 0; i < rets.size(); ++i) {
    auto b = rets.get<ffi::AnyBuffer>(i);
    if (b.has_error()) return b.error();
    outs.push_back(**b);
  }
  if (ins.empty() || outs.empty())
    return ffi::Error::InvalidArgument("pfft pieces: needs input and output pieces");
  if (auto e = MakeSide(ins, in_split, in_sign, mev[0], in, "input"); e.failure()) return e;
  if (auto e = MakeSide(outs, out_split, out_sign, mev[1], out, "output"); e.failure())
    return e;
  if (out.dims.size() != in.dims.size())
    return ffi::Error::InvalidArgument("pfft pieces: ranks differ");
  ops.ti = ins[0].element_type();
  ops.to = outs[0].element_type();
  for (auto &o : outs) {
    const char *lo = static_cast<const char *>(o.untyped_data()), *hi = lo + o.size_bytes();
    for (auto &i : ins) {
      const char *ilo = static_cast<const char *>(i.untyped_data());
      if (lo < ilo + i.size_bytes() && ilo < hi) ops.overlap = true;
    }
  }
  return ffi::Error::Success();
}

// Where the output overlaps the input: only the in-place c2c pass described at the
// top (both sides cut along the transform axis `f`, output piece k over input piece k).
ffi::Error CheckInPlace(const Operands &ops, Mode mode, size_t f) {
  if (!ops.overlap) return ffi::Error::Success();
  const Side &in = ops.in, &out = ops.out;
  const bool fits = mode == Mode::kC2C && ops.ti == ops.to && in.count == out.count &&
                    in.dims == out.dims && in.ptrs == out.ptrs &&
                    (in.count == 1 || (in.split == static_cast<int>(f) && out.split == in.split));
  if (fits) return ffi::Error::Success();
  return ffi::Error::InvalidArgument(
      "pfft pieces: the output overlaps the input; only a c2c pass along the axis both "
      "sides are cut along, output piece k over input piece k of the same shape, runs in place");
}

// The threads a call runs on (at least one).
size_t ThreadCount(int64_t nthreads) {
  return static_cast<size_t>(nthreads < 1 ? 1 : nthreads);
}

// The `kind` attribute as a Mode; false for a kind the kernel does not have.
bool ParseMode(std::string_view kind, Mode &mode) {
  if (kind == "c2c") mode = Mode::kC2C;
  else if (kind == "r2c") mode = Mode::kR2C;
  else if (kind == "c2r") mode = Mode::kC2R;
  else if (kind == "r2r") mode = Mode::kR2R;
  else if (kind == "copy") mode = Mode::kCopy;
  else return false;
  return true;
}

// A pass's axis `axis` (negative: from the end) as `f`, and the points it reads and
// writes along it (`n_in`, `n_out`: n/2+1 on the complex side of r2c and c2r, else n),
// checked against what each side holds there.
ffi::Error PassAxis(Mode mode, int64_t axis, int64_t n, const Side &in, const Side &out,
                    size_t &f, size_t &n_in, size_t &n_out) {
  const int64_t r = static_cast<int64_t>(in.dims.size());
  const int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r) return ffi::Error::InvalidArgument("pfft pieces: axis out of range");
  if (n < 1) return ffi::Error::InvalidArgument("pfft pieces: n must be positive");
  f = static_cast<size_t>(a);
  const size_t half = static_cast<size_t>(n) / 2 + 1;
  n_in = mode == Mode::kC2R ? half : static_cast<size_t>(n);
  n_out = mode == Mode::kR2C ? half : static_cast<size_t>(n);
  if (n_in > in.total(f) || n_out > out.total(f))
    return ffi::Error::InvalidArgument("pfft pieces: n exceeds the pieces along the axis");
  return ffi::Error::Success();
}

// Whether `count` per-bin weights fit an FFT pass (none, or one per bin of its complex
// side; copies take none).
bool BinWeightsFit(Mode mode, size_t count, size_t n_in, size_t n_out) {
  return count == 0 || (mode != Mode::kCopy && count == (mode == Mode::kR2C ? n_out : n_in));
}

ffi::Error PiecesImpl(ffi::Buffer<ffi::S32> me, ffi::RemainingArgs args,
                      ffi::RemainingRets rets, ffi::Span<const double> weights,
                      std::string_view kind, int64_t type, bool sine,
                      int64_t axis, int64_t n, int64_t in_split, int64_t in_sign,
                      int64_t out_split, int64_t out_sign, bool forward, double scale,
                      int64_t nthreads) {
  Operands ops;
  if (auto e = ReadSides(me, args, rets, in_split, in_sign, out_split, out_sign, ops);
      e.failure())
    return e;
  const Side &in = ops.in, &out = ops.out;
  Mode mode;
  if (!ParseMode(kind, mode))
    return ffi::Error::InvalidArgument(
        "pfft pieces: kind must be c2c, r2c, c2r, r2r or copy");
  R2RSpec r2r;
  if (mode == Mode::kR2R) {
    if (type < 1 || type > 4)
      return ffi::Error::InvalidArgument("pfft pieces: r2r type must be 1, 2, 3 or 4");
    if (type == 1 && !sine && n < 2)
      return ffi::Error::InvalidArgument("pfft pieces: a DCT-I needs at least 2 points");
    r2r.type = static_cast<int>(type);
    r2r.sine = sine;
  }
  size_t fa, n_in, n_out;
  if (auto e = PassAxis(mode, axis, n, in, out, fa, n_in, n_out); e.failure()) return e;
  if (auto e = CheckInPlace(ops, mode, fa); e.failure()) return e;
  std::vector<double> w(weights.begin(), weights.end());
  if (mode == Mode::kR2R && !w.empty() && w.size() != 4)
    return ffi::Error::InvalidArgument(
        "pfft pieces: r2r weights must be [pre_first, pre_last, post_first, post_last]");
  if (mode != Mode::kR2R && !BinWeightsFit(mode, w.size(), n_in, n_out))
    return ffi::Error::InvalidArgument("pfft pieces: weights must have one entry per bin");
  const auto ti = ops.ti, to = ops.to;
  using ffi::DataType;
  const bool same = mode == Mode::kCopy || mode == Mode::kR2R;  // the scratch passes
  const size_t nt = ThreadCount(nthreads);
  size_t nn = static_cast<size_t>(n);
  ops.AdviseHugePages();
  using C64 = std::complex<float>;
  using C128 = std::complex<double>;
  try {
    if (mode == Mode::kR2R && ti == to && ti == DataType::F32)
      RunFft<float, float, float>(in, out, fa, mode, nn, n_in, n_out, forward, scale, w,
                                  r2r, nt);
    else if (mode == Mode::kR2R && ti == to && ti == DataType::F64)
      RunFft<double, double, double>(in, out, fa, mode, nn, n_in, n_out, forward, scale, w,
                                     r2r, nt);
    else if (same && ti == to && ti == DataType::C64)
      RunScratch<float, C64>(in, out, fa, mode, nn, scale, w, r2r, nt);
    else if (same && ti == to && ti == DataType::C128)
      RunScratch<double, C128>(in, out, fa, mode, nn, scale, w, r2r, nt);
    else if (same && ti == to && ti == DataType::F32)
      RunScratch<float, float>(in, out, fa, mode, nn, scale, w, r2r, nt);
    else if (same && ti == to && ti == DataType::F64)
      RunScratch<double, double>(in, out, fa, mode, nn, scale, w, r2r, nt);
    else if (mode == Mode::kC2C && ti == DataType::C64 && to == DataType::C64)
      RunFft<float, C64, C64>(in, out, fa, mode, nn, n_in, n_out, forward, scale, w, r2r, nt);
    else if (mode == Mode::kC2C && ti == DataType::C128 && to == DataType::C128)
      RunFft<double, C128, C128>(in, out, fa, mode, nn, n_in, n_out, forward, scale, w,
                                 r2r, nt);
    else if (mode == Mode::kR2C && ti == DataType::F32 && to == DataType::C64)
      RunFft<float, float, C64>(in, out, fa, mode, nn, n_in, n_out, forward, scale, w,
                                r2r, nt);
    else if (mode == Mode::kR2C && ti == DataType::F64 && to == DataType::C128)
      RunFft<double, double, C128>(in, out, fa, mode, nn, n_in, n_out, forward, scale, w,
                                   r2r, nt);
    else if (mode == Mode::kC2R && ti == DataType::C64 && to == DataType::F32)
      RunFft<float, C64, float>(in, out, fa, mode, nn, n_in, n_out, forward, scale, w,
                                r2r, nt);
    else if (mode == Mode::kC2R && ti == DataType::C128 && to == DataType::F64)
      RunFft<double, C128, double>(in, out, fa, mode, nn, n_in, n_out, forward, scale, w,
                                   r2r, nt);
    else
      return ffi::Error::InvalidArgument(
          "pfft pieces: element types do not fit the kind (c2c: complex64 or complex128 "
          "both sides; copy and r2r: the same type both sides; r2c: float -> complex; "
          "c2r: complex -> float)");
  } catch (const std::exception &e) {
    return ffi::Error::Internal(std::string("pfft pieces: ") + e.what());
  }
  return ffi::Error::Success();
}

// One pass of a pair: kind c2c, r2c or c2r along `axis` (negative: from the end);
// its lengths are checked against what the pair's input and output hold along it.
ffi::Error ParsePass(std::string_view kind, int64_t axis, int64_t n, bool forward,
                     double scale, ffi::Span<const double> weights, const Side &in,
                     const Side &out, PassSpec &s) {
  if (!ParseMode(kind, s.mode) || s.mode == Mode::kR2R || s.mode == Mode::kCopy)
    return ffi::Error::InvalidArgument("pfft pieces pair: kinds must be c2c, r2c or c2r");
  if (auto e = PassAxis(s.mode, axis, n, in, out, s.f, s.n_in, s.n_out); e.failure()) return e;
  s.n = static_cast<size_t>(n);
  s.weights.assign(weights.begin(), weights.end());
  if (!BinWeightsFit(s.mode, s.weights.size(), s.n_in, s.n_out))
    return ffi::Error::InvalidArgument("pfft pieces pair: weights must have one entry per bin");
  s.forward = forward;
  s.scale = scale;
  return ffi::Error::Success();
}

ffi::Error PiecesPairImpl(ffi::Buffer<ffi::S32> me, ffi::RemainingArgs args,
                          ffi::RemainingRets rets, std::string_view kind1, int64_t axis1,
                          int64_t n1, bool forward1, double scale1,
                          ffi::Span<const double> weights1, std::string_view kind2,
                          int64_t axis2, int64_t n2, bool forward2, double scale2,
                          ffi::Span<const double> weights2, int64_t in_split, int64_t in_sign,
                          int64_t out_split, int64_t out_sign, int64_t nthreads) {
  Operands ops;
  if (auto e = ReadSides(me, args, rets, in_split, in_sign, out_split, out_sign, ops);
      e.failure())
    return e;
  const Side &in = ops.in, &out = ops.out;
  if (ops.overlap)
    return ffi::Error::InvalidArgument("pfft pieces pair: the output overlaps the input");
  // each pass's axis is one the other leaves alone: pass 1 reads the input along its
  // axis and pass 2 writes the output along its own, as a single pass would
  PassSpec s1, s2;
  if (auto e = ParsePass(kind1, axis1, n1, forward1, scale1, weights1, in, out, s1);
      e.failure())
    return e;
  if (auto e = ParsePass(kind2, axis2, n2, forward2, scale2, weights2, in, out, s2);
      e.failure())
    return e;
  if (s1.f == s2.f)
    return ffi::Error::InvalidArgument("pfft pieces pair: the two axes must differ");
  if (s1.mode == Mode::kC2R || s2.mode == Mode::kR2C)
    return ffi::Error::InvalidArgument(
        "pfft pieces pair: the first pass is c2c or r2c, the second c2c or c2r");
  const size_t nt = ThreadCount(nthreads);
  ops.AdviseHugePages();
  using ffi::DataType;
  using C64 = std::complex<float>;
  using C128 = std::complex<double>;
  const auto ti = ops.ti, to = ops.to;
  const bool r2c = s1.mode == Mode::kR2C, c2r = s2.mode == Mode::kC2R;
  try {
    if (ti == (r2c ? DataType::F32 : DataType::C64) && to == (c2r ? DataType::F32 : DataType::C64)) {
      if (r2c) RunFftPair<float, float, C64, C64>(in, out, s1, s2, nt);
      else if (c2r) RunFftPair<float, C64, C64, float>(in, out, s1, s2, nt);
      else RunFftPair<float, C64, C64, C64>(in, out, s1, s2, nt);
    } else if (ti == (r2c ? DataType::F64 : DataType::C128) &&
               to == (c2r ? DataType::F64 : DataType::C128)) {
      if (r2c) RunFftPair<double, double, C128, C128>(in, out, s1, s2, nt);
      else if (c2r) RunFftPair<double, C128, C128, double>(in, out, s1, s2, nt);
      else RunFftPair<double, C128, C128, C128>(in, out, s1, s2, nt);
    } else {
      return ffi::Error::InvalidArgument(
          "pfft pieces pair: element types do not fit the kinds (r2c: float in; c2r: "
          "float out; otherwise complex; one precision)");
    }
  } catch (const std::exception &e) {
    return ffi::Error::Internal(std::string("pfft pieces pair: ") + e.what());
  }
  return ffi::Error::Success();
}

}  // namespace

#pragma GCC visibility push(default)
// Lines per batch of a pass (1 to kMaxBatch; 0 or less: the default, 16 where the lines
// are contiguous, else 64). pfft's loader sets it from $PFFT_PIECES_BATCH
// (pfft/settings.py); the library reads no environment.
extern "C" void pfft_cpu_set_pieces_batch(long lines) {
  pieces_batch.store(lines, std::memory_order_relaxed);
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftPieces, PiecesImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .RemainingArgs()
                                  .RemainingRets()
                                  .Attr<ffi::Span<const double>>("weights")
                                  .Attr<std::string_view>("kind")
                                  .Attr<int64_t>("type")
                                  .Attr<bool>("sine")
                                  .Attr<int64_t>("axis")
                                  .Attr<int64_t>("n")
                                  .Attr<int64_t>("in_split")
                                  .Attr<int64_t>("in_sign")
                                  .Attr<int64_t>("out_split")
                                  .Attr<int64_t>("out_sign")
                                  .Attr<bool>("forward")
                                  .Attr<double>("scale")
                                  .Attr<int64_t>("nthreads"));
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftPiecesPair, PiecesPairImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .RemainingArgs()
                                  .RemainingRets()
                                  .Attr<std::string_view>("kind1")
                                  .Attr<int64_t>("axis1")
                                  .Attr<int64_t>("n1")
                                  .Attr<bool>("forward1")
                                  .Attr<double>("scale1")
                                  .Attr<ffi::Span<const double>>("weights1")
                                  .Attr<std::string_view>("kind2")
                                  .Attr<int64_t>("axis2")
                                  .Attr<int64_t>("n2")
                                  .Attr<bool>("forward2")
                                  .Attr<double>("scale2")
                                  .Attr<ffi::Span<const double>>("weights2")
                                  .Attr<int64_t>("in_split")
                                  .Attr<int64_t>("in_sign")
                                  .Attr<int64_t>("out_split")
                                  .Attr<int64_t>("out_sign")
                                  .Attr<int64_t>("nthreads"));
#pragma GCC visibility pop
