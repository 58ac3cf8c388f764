// pfft GPU engine: XLA FFI handlers running cuFFT on any axes of a row-major block.
//
// Same targets and attributes as kernels/cpu/pfft_cpu.cc (axes counted from the end,
// forward, scale, nthreads [ignored here]):
//   PfftC2C  complex -> complex; in place when XLA aliases output to input; attribute
//            `shape`: the block seen as that shape (empty: its own)
//   PfftR2C  real -> complex, the last listed axis halved
//   PfftC2R  complex -> real, the last listed axis of n real points
//   PfftC2CRows      complex -> complex over axes that end right before axis `axis`:
//                    rows [in_start, in_start + r) of that axis of the input to rows
//                    [out_start, out_start + r) of the output, r the fewer rows of the two
//                    (read or written where they lie in the larger block: a pipelined
//                    window's piece, pfft/executor.py); the output's other rows unwritten
//   PfftC2CRowsInto  the same into a block given as a first operand, which XLA aliases
//                    to the output: the other rows keep their values (both: further
//                    operands only waited for, attribute out_shape, the output seen
//                    as that shape)
//   PfftTakeChunks   points start..start + width of every chunk of a block's axis as a
//                    piece, chunk axis first (common/chunk_copy.h): one copy kernel
//                    over every chunk, in 16-byte units where aligned
//   PfftPutChunks    the inverse: a piece written over those points of a block given as
//                    a first operand, which XLA aliases to the output; the same 2-D
//                    copies reversed (both: further operands only waited for)
//   PfftPutChunksNew the same into a new block, without the first operand (points no
//                    piece was put on left as allocated)
//
// How an axis set becomes cuFFT calls is kernels/common/cufft_schedule.h, pure C++ that
// kernels/common/cufft_schedule_test.cc checks on the CPU: runs of up to three adjacent
// axes, each one cufftPlanMany over one batch dimension and a loop of launches over the
// other; real transforms as a rank-1 R2C/C2R plan on the halved axis and C2C on the rest;
// the sign cuFFT lacks for real transforms as a conjugation, fused into the scaling pass
// (R2C) or into the input copy C2R needs anyway (cuFFT overwrites a C2R input). This
// file only executes such a schedule.
//
// Plans live in a cache keyed by (type, geometry, device, stream) behind a mutex;
// each plan has its own mutex for set-stream / set-work-area / exec.
//
// Working memory (the C2R input copy, a pitched copy of a real side, cuFFT's work area:
// cufftSetAutoAllocation(0) + cufftSetWorkArea) is one more output of the custom call,
// a uint8 buffer XLA allocates like any other: pfft_cuda_workspace_size() tells Python
// its size when the call is traced (XLA's FFI scratch allocator gave none on the GPUs
// tried). Under vmap pfft makes the call on the batched block, sized anew.

#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "../common/chunk_copy.h"
#include "../common/cufft_schedule.h"
#include "../common/lru_cache.h"
#include "../common/rows_attrs.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// ---------------------------------------------------------------- errors

std::string CufftName(cufftResult r) { return "cuFFT error " + std::to_string(static_cast<int>(r)); }

#define PFFT_CUFFT(expr)                                                         \
  do {                                                                           \
    cufftResult _r = (expr);                                                     \
    if (_r != CUFFT_SUCCESS)                                                     \
      return ffi::Error::Internal(std::string(#expr) + ": " + CufftName(_r));    \
  } while (0)

#define PFFT_CUDA(expr)                                                          \
  do {                                                                           \
    cudaError_t _e = (expr);                                                     \
    if (_e != cudaSuccess)                                                       \
      return ffi::Error::Internal(std::string(#expr) + ": " + cudaGetErrorString(_e)); \
  } while (0)

#define PFFT_TRY(expr)                                                           \
  do {                                                                           \
    ffi::Error _err = (expr);                                                    \
    if (_err.failure()) return _err;                                             \
  } while (0)

// ---------------------------------------------------------------- plan cache

struct PlanKey {
  cufftType type;
  int rank;
  std::array<long long, 3> n;
  long long istride, idist, ostride, odist, batch;
  int device;
  cudaStream_t stream;
  auto tie() const {
    return std::tie(type, rank, n, istride, idist, ostride, odist, batch, device, stream);
  }
  bool operator<(const PlanKey &o) const { return tie() < o.tie(); }
};

struct Plan {
  cufftHandle handle = 0;
  size_t work_size = 0;
  std::mutex mu;  // guards set-stream / set-work-area / exec on this handle
  ~Plan() { if (handle) cufftDestroy(handle); }
};

// A bounded LRU (kernels/common/lru_cache.h): at most 64 plans unless
// pfft_cuda_set_plan_cache_size says otherwise (pfft's loader passes
// $PFFT_CUFFT_PLAN_CACHE, pfft/settings.py; the library reads no environment). An
// evicted plan that a call still holds (shared_ptr) lives until that call ends.
pfft::LruCache<PlanKey, Plan> &Cache() {
  // never destroyed: no cufftDestroy after the CUDA runtime has shut down at exit
  static auto *cache = new pfft::LruCache<PlanKey, Plan>(64);
  return *cache;
}

// A plan for `key` on the current device, without a work area of its own.
cufftResult MakePlan(const PlanKey &key, Plan &plan) {
  cufftResult r = cufftCreate(&plan.handle);
  if (r == CUFFT_SUCCESS) r = cufftSetAutoAllocation(plan.handle, 0);
  std::array<long long, 3> n = key.n, embed = key.n;
  if (r == CUFFT_SUCCESS)
    r = cufftMakePlanMany64(plan.handle, key.rank, n.data(), embed.data(), key.istride,
                            key.idist, embed.data(), key.ostride, key.odist, key.type,
                            key.batch, &plan.work_size);
  return r;
}

ffi::Error GetPlan(const PlanKey &key, std::shared_ptr<Plan> &out) {
  out = Cache().Get(key);
  if (out) return ffi::Error::Success();
  auto plan = std::make_shared<Plan>();  // made outside the cache's lock
  PFFT_CUFFT(MakePlan(key, *plan));
  out = Cache().Put(key, plan);
  return ffi::Error::Success();
}

// The work area a plan of `key`'s geometry needs on the current device (the stream
// plays no part), remembered: asked for when a call is traced.
cufftResult WorkSize(PlanKey key, size_t &bytes) {
  static std::mutex mu;
  static std::map<PlanKey, size_t> sizes;
  key.stream = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = sizes.find(key);
    if (it != sizes.end()) return bytes = it->second, CUFFT_SUCCESS;
  }
  Plan plan;
  cufftResult r = MakePlan(key, plan);
  if (r != CUFFT_SUCCESS) return r;
  std::lock_guard<std::mutex> lock(mu);
  bytes = sizes[key] = plan.work_size;
  return CUFFT_SUCCESS;
}

// ---------------------------------------------------------------- elementwise kernels

template <typename T>
__global__ void ScaleConj(T *x, long long count, double scale, bool conj) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    T v = x[i];
    v.x = v.x * scale;
    v.y = (conj ? -v.y : v.y) * scale;
    x[i] = v;
  }
}

template <typename T>
__global__ void Scale(T *x, long long count, double scale) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x)
    x[i] = x[i] * scale;
}

// `rows` rows of `width` elements, `pitch` apart, times `scale`
template <typename T>
__global__ void ScaleRows(T *x, long long rows, long long width, long long pitch,
                          double scale) {
  long long count = rows * width;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    long long at = (i / width) * pitch + i % width;
    T v = x[at];
    v.x = v.x * scale;
    v.y = v.y * scale;
    x[at] = v;
  }
}

template <typename T>
__global__ void CopyConj(const T *in, T *out, long long count) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    T v = in[i];
    v.y = -v.y;
    out[i] = v;
  }
}

unsigned Blocks(long long count) {
  return static_cast<unsigned>(std::min<long long>((count + 255) / 256, 65535));
}

// ---------------------------------------------------------------- execution

namespace cs = pfft::cufft_schedule;
static_assert(cs::kForward == CUFFT_FORWARD && cs::kInverse == CUFFT_INVERSE,
              "cufft_schedule's signs are cuFFT's");

cufftType TypeOf(cs::Kind kind, bool dbl) {
  switch (kind) {
    case cs::Kind::kR2C: return dbl ? CUFFT_D2Z : CUFFT_R2C;
    case cs::Kind::kC2R: return dbl ? CUFFT_Z2D : CUFFT_C2R;
    default: return dbl ? CUFFT_Z2Z : CUFFT_C2C;
  }
}

// The plan key of one step of a schedule (kernels/common/cufft_schedule.h).
PlanKey KeyOf(const cs::Step &step, bool dbl, int device, cudaStream_t stream) {
  const cs::Layout &l = step.layout;
  PlanKey key{};
  key.type = TypeOf(step.kind, dbl);
  key.rank = l.rank;
  key.n = l.n;
  key.istride = l.istride;
  key.idist = l.idist;
  key.ostride = l.ostride;
  key.odist = l.odist;
  key.batch = l.batch;
  key.device = device;
  key.stream = stream;
  return key;
}

// One step: its plan's loop of launches on `stream`, with the work area `work`.
ffi::Error ExecStep(cudaStream_t stream, Plan &plan, void *work, bool dbl,
                    const cs::Step &step, const void *in, void *out) {
  const cs::Layout &l = step.layout;
  size_t real = dbl ? sizeof(double) : sizeof(float), cplx = 2 * real;
  size_t in_elem = step.kind == cs::Kind::kR2C ? real : cplx;
  size_t out_elem = step.kind == cs::Kind::kC2R ? real : cplx;
  cufftType type = TypeOf(step.kind, dbl);
  std::lock_guard<std::mutex> lock(plan.mu);
  PFFT_CUFFT(cufftSetStream(plan.handle, stream));
  if (plan.work_size > 0) PFFT_CUFFT(cufftSetWorkArea(plan.handle, work));
  auto *src = static_cast<char *>(const_cast<void *>(in));
  auto *dst = static_cast<char *>(out);
  for (long long k = 0; k < l.loops; ++k) {
    void *i = src + k * l.in_step * in_elem;
    void *o = dst + k * l.out_step * out_elem;
    switch (type) {
      case CUFFT_C2C:
        PFFT_CUFFT(cufftExecC2C(plan.handle, (cufftComplex *)i, (cufftComplex *)o,
                                step.direction));
        break;
      case CUFFT_Z2Z:
        PFFT_CUFFT(cufftExecZ2Z(plan.handle, (cufftDoubleComplex *)i, (cufftDoubleComplex *)o,
                                step.direction));
        break;
      case CUFFT_R2C:
        PFFT_CUFFT(cufftExecR2C(plan.handle, (cufftReal *)i, (cufftComplex *)o));
        break;
      case CUFFT_D2Z:
        PFFT_CUFFT(cufftExecD2Z(plan.handle, (cufftDoubleReal *)i, (cufftDoubleComplex *)o));
        break;
      case CUFFT_C2R:
        PFFT_CUFFT(cufftExecC2R(plan.handle, (cufftComplex *)i, (cufftReal *)o));
        break;
      case CUFFT_Z2D:
        PFFT_CUFFT(cufftExecZ2D(plan.handle, (cufftDoubleComplex *)i, (cufftDoubleReal *)o));
        break;
      default:
        return ffi::Error::Internal("pfft: unknown cuFFT type");
    }
  }
  return ffi::Error::Success();
}

std::vector<long long> Dims(ffi::Span<const int64_t> d) { return {d.begin(), d.end()}; }

// The element types a kind takes: complex64/complex128 in and out (C2C), float32/64 ->
// complex64/128 (R2C), the reverse (C2R). Sets `dbl`; the error, or nullptr where they fit.
const char *TypesError(cs::Kind kind, ffi::DataType in, ffi::DataType out, bool &dbl) {
  using T = ffi::DataType;
  switch (kind) {
    case cs::Kind::kC2C:
      dbl = in == T::C128;
      return (in == T::C64 || in == T::C128) && out == in
                 ? nullptr : "pfft c2c: complex64 or complex128 only";
    case cs::Kind::kR2C:
      dbl = in == T::F64;
      return (in == T::F32 && out == T::C64) || (in == T::F64 && out == T::C128)
                 ? nullptr : "pfft r2c: float32->complex64 or float64->complex128";
    case cs::Kind::kC2R:
      dbl = in == T::C128;
      return (in == T::C64 && out == T::F32) || (in == T::C128 && out == T::F64)
                 ? nullptr : "pfft c2r: complex64->float32 or complex128->float64";
  }
  return "pfft: unknown transform kind";
}

// A schedule, its plans from the cache, and where its working memory lies.
struct Prepared {
  cs::Schedule s;
  std::vector<std::shared_ptr<Plan>> plans;
  cs::Arena arena;
};

size_t RealSize(bool dbl) { return dbl ? sizeof(double) : sizeof(float); }

// The plans of the schedule p.s, and where its working memory lies.
ffi::Error PlanSchedule(bool dbl, cudaStream_t stream, Prepared &p) {
  int device = 0;
  PFFT_CUDA(cudaGetDevice(&device));
  size_t work = 0;
  p.plans.clear();
  for (const cs::Step &step : p.s.steps) {
    std::shared_ptr<Plan> plan;
    PFFT_TRY(GetPlan(KeyOf(step, dbl, device, stream), plan));
    work = std::max(work, plan->work_size);
    p.plans.push_back(std::move(plan));
  }
  p.arena = cs::Arrange(p.s, RealSize(dbl), static_cast<long long>(work));
  return ffi::Error::Success();
}

ffi::Error Prepare(cs::Kind kind, bool dbl, const std::vector<long long> &din,
                   const std::vector<long long> &dout, const std::vector<int> &axes,
                   bool forward, double scale, cudaStream_t stream, Prepared &p) {
  std::string err = cs::MakeSchedule(kind, din, dout, axes, forward, scale, RealSize(dbl), p.s);
  if (!err.empty()) return ffi::Error::InvalidArgument(err);
  return PlanSchedule(dbl, stream, p);
}

// One block through a prepared schedule: x -> y, working memory at `ws`.
ffi::Error Run(const Prepared &p, cudaStream_t stream, bool dbl, cs::Kind kind, const void *x,
               void *y, char *ws, long long count_in, long long count_out) {
  const cs::Schedule &s = p.s;
  size_t real = RealSize(dbl);
  void *tmp = ws + p.arena.tmp, *pitched = ws + p.arena.pitched, *work = ws + p.arena.work;
  if (s.copy_to_tmp) {  // C2R: cuFFT overwrites its input
    if (s.conj_copy && dbl)
      CopyConj<cufftDoubleComplex><<<Blocks(count_in), 256, 0, stream>>>(
          static_cast<const cufftDoubleComplex *>(x), static_cast<cufftDoubleComplex *>(tmp),
          count_in);
    else if (s.conj_copy)
      CopyConj<cufftComplex><<<Blocks(count_in), 256, 0, stream>>>(
          static_cast<const cufftComplex *>(x), static_cast<cufftComplex *>(tmp), count_in);
    else
      PFFT_CUDA(cudaMemcpyAsync(tmp, x, count_in * 2 * real, cudaMemcpyDeviceToDevice, stream));
  }
  if (s.pitch_in.rows)  // R2C whose launches would start unaligned: rows padded
    PFFT_CUDA(cudaMemcpy2DAsync(pitched, s.pitch_in.pitch * real, x, s.pitch_in.width * real,
                                s.pitch_in.width * real, s.pitch_in.rows,
                                cudaMemcpyDeviceToDevice, stream));
  size_t cplx = 2 * real;
  auto buffer = [&](cs::Buffer b) -> void * {
    switch (b) {
      case cs::Buffer::kIn:
        return static_cast<char *>(const_cast<void *>(x)) + s.in_offset * cplx;
      case cs::Buffer::kOut: return static_cast<char *>(y) + s.out_offset * cplx;
      case cs::Buffer::kTmp: return tmp;
      default: return pitched;
    }
  };
  for (size_t i = 0; i < s.steps.size(); ++i)
    PFFT_TRY(ExecStep(stream, *p.plans[i], work, dbl, s.steps[i], buffer(s.steps[i].src),
                      buffer(s.steps[i].dst)));
  if (s.pitch_out.rows)  // C2R likewise: the padded rows back to the dense output
    PFFT_CUDA(cudaMemcpy2DAsync(y, s.pitch_out.width * real, pitched, s.pitch_out.pitch * real,
                                s.pitch_out.width * real, s.pitch_out.rows,
                                cudaMemcpyDeviceToDevice, stream));
  if (kind == cs::Kind::kC2R) {
    if (s.scale != 1.0 && dbl)
      Scale<double><<<Blocks(count_out), 256, 0, stream>>>(static_cast<double *>(y), count_out,
                                                            s.scale);
    else if (s.scale != 1.0)
      Scale<float><<<Blocks(count_out), 256, 0, stream>>>(static_cast<float *>(y), count_out,
                                                           s.scale);
  } else if (s.out_rows.rows && s.scale != 1.0) {  // a rows transform: its rows only
    const cs::PitchedCopy &r = s.out_rows;
    char *at = static_cast<char *>(y) + s.out_offset * cplx;
    if (dbl)
      ScaleRows<cufftDoubleComplex><<<Blocks(r.rows * r.width), 256, 0, stream>>>(
          reinterpret_cast<cufftDoubleComplex *>(at), r.rows, r.width, r.pitch, s.scale);
    else
      ScaleRows<cufftComplex><<<Blocks(r.rows * r.width), 256, 0, stream>>>(
          reinterpret_cast<cufftComplex *>(at), r.rows, r.width, r.pitch, s.scale);
  } else if (!s.out_rows.rows && (s.scale != 1.0 || s.conj_out)) {
    if (dbl)
      ScaleConj<cufftDoubleComplex><<<Blocks(count_out), 256, 0, stream>>>(
          static_cast<cufftDoubleComplex *>(y), count_out, s.scale, s.conj_out);
    else
      ScaleConj<cufftComplex><<<Blocks(count_out), 256, 0, stream>>>(
          static_cast<cufftComplex *>(y), count_out, s.scale, s.conj_out);
  }
  PFFT_CUDA(cudaGetLastError());
  return ffi::Error::Success();
}

std::string TooSmall(long long need, long long have) {
  return "pfft: the transform needs " + std::to_string(need) + " bytes of working memory, "
         "the call holds " + std::to_string(have) + " (traced for another GPU model?)";
}

// The three handlers: check the buffers, make the schedule, run it on the stream.
// C2C runs in place when XLA aliases the output to the input (donated). `ws` is the
// working memory, pfft_cuda_workspace_size() bytes for this block.
// `view` (C2C only): the block seen as that shape, the same number of elements (empty:
// its own).
ffi::Error Transform(cs::Kind kind, cudaStream_t stream, ffi::AnyBuffer x,
                     ffi::Result<ffi::AnyBuffer> y, ffi::Result<ffi::AnyBuffer> ws,
                     ffi::Span<const int64_t> axes, bool forward, double scale,
                     ffi::Span<const int64_t> view = {}) {
  bool dbl = false;
  if (const char *types = TypesError(kind, x.element_type(), y->element_type(), dbl))
    return ffi::Error::InvalidArgument(types);
  auto din = Dims(x.dimensions()), dout = Dims(y->dimensions());
  if (view.size() != 0) {
    long long count = 1;
    for (int64_t d : view) count *= d;
    if (kind != cs::Kind::kC2C || din != dout ||
        count != static_cast<long long>(x.element_count()))
      return ffi::Error::InvalidArgument("pfft c2c: shape does not hold the block's elements");
    din = dout = Dims(view);
  }
  std::vector<int> ax;
  std::string err = cs::ResolveAxes(axes.begin(), axes.size(), int(din.size()), ax);
  if (!err.empty()) return ffi::Error::InvalidArgument(err);
  Prepared p;
  PFFT_TRY(Prepare(kind, dbl, din, dout, ax, forward, scale, stream, p));
  if (p.s.steps.empty()) return ffi::Error::Success();  // an empty block
  long long have = static_cast<long long>(ws->size_bytes());
  auto *arena = static_cast<char *>(ws->untyped_data());
  long long count_in = static_cast<long long>(x.element_count());
  long long count_out = static_cast<long long>(y->element_count());
  if (p.arena.total > have) return ffi::Error::Internal(TooSmall(p.arena.total, have));
  return Run(p, stream, dbl, kind, x.untyped_data(), y->untyped_data(), arena, count_in,
             count_out);
}

template <cs::Kind kKind>
ffi::Error Handler(cudaStream_t stream, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y,
                   ffi::Result<ffi::AnyBuffer> ws, ffi::Span<const int64_t> axes, bool forward,
                   double scale, int64_t /*nthreads: CPU only*/) {
  return Transform(kKind, stream, x, y, ws, axes, forward, scale);
}

// C2C, the block seen as `shape` (empty: its own)
ffi::Error C2CHandler(cudaStream_t stream, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y,
                      ffi::Result<ffi::AnyBuffer> ws, ffi::Span<const int64_t> axes,
                      bool forward, double scale, int64_t /*nthreads: CPU only*/,
                      ffi::Span<const int64_t> shape) {
  return Transform(cs::Kind::kC2C, stream, x, y, ws, axes, forward, scale, shape);
}

// The rows handlers (C2C): rows of axis `axis` (counted from the end) read from row
// `in_start` of x and written from row `out_start` of y, as many as the fewer of the two
// blocks has (kernels/common/cufft_schedule.h, MakeRowsSchedule).
ffi::Error RowsTransform(cudaStream_t stream, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y,
                         ffi::Result<ffi::AnyBuffer> ws, ffi::Span<const int64_t> axes,
                         bool forward, double scale, int64_t axis, int64_t in_start,
                         int64_t out_start, ffi::Span<const int64_t> out_shape) {
  bool dbl = false;
  if (const char *types = TypesError(cs::Kind::kC2C, x.element_type(), y->element_type(), dbl))
    return ffi::Error::InvalidArgument(types);
  auto din = Dims(x.dimensions());
  auto dout = Dims(out_shape.size() == 0 ? y->dimensions() : out_shape);
  long long out_count = 1;
  for (long long d : dout) out_count *= d;
  if (out_count != static_cast<long long>(y->element_count()))
    return ffi::Error::InvalidArgument("pfft rows: out_shape does not hold the output's elements");
  int ndim = static_cast<int>(din.size());
  std::vector<int> ax;
  std::string err = cs::ResolveAxes(axes.begin(), axes.size(), ndim, ax);
  if (!err.empty()) return ffi::Error::InvalidArgument(err);
  int row_axis = static_cast<int>(axis < 0 ? axis + ndim : axis);
  if (row_axis < 0 || row_axis >= ndim || int(dout.size()) != ndim)
    return ffi::Error::InvalidArgument("pfft rows: row axis out of range");
  long long rows = std::min(din[row_axis], dout[row_axis]);
  Prepared p;
  err = cs::MakeRowsSchedule(din, dout, ax, row_axis, rows, in_start, out_start, forward,
                             scale, p.s);
  if (!err.empty()) return ffi::Error::InvalidArgument(err);
  PFFT_TRY(PlanSchedule(dbl, stream, p));
  if (p.s.steps.empty()) return ffi::Error::Success();
  long long have = static_cast<long long>(ws->size_bytes());
  if (p.arena.total > have) return ffi::Error::Internal(TooSmall(p.arena.total, have));
  return Run(p, stream, dbl, cs::Kind::kC2C, x.untyped_data(), y->untyped_data(),
             static_cast<char *>(ws->untyped_data()), static_cast<long long>(x.element_count()),
             static_cast<long long>(y->element_count()));
}

ffi::Error RowsHandler(cudaStream_t stream, ffi::AnyBuffer x, ffi::RemainingArgs /*after*/,
                       ffi::Result<ffi::AnyBuffer> y, ffi::Result<ffi::AnyBuffer> ws,
                       ffi::Span<const int64_t> axes, bool forward, double scale,
                       int64_t /*nthreads*/, int64_t axis, int64_t in_start, int64_t out_start,
                       ffi::Span<const int64_t> out_shape) {
  return RowsTransform(stream, x, y, ws, axes, forward, scale, axis, in_start, out_start,
                       out_shape);
}

// `into` is aliased to y: XLA has put its values there, the rows are written over them
ffi::Error RowsIntoHandler(cudaStream_t stream, ffi::AnyBuffer into, ffi::AnyBuffer x,
                           ffi::RemainingArgs /*after*/, ffi::Result<ffi::AnyBuffer> y,
                           ffi::Result<ffi::AnyBuffer> ws,
                           ffi::Span<const int64_t> axes, bool forward, double scale,
                           int64_t /*nthreads*/, int64_t axis, int64_t in_start,
                           int64_t out_start, ffi::Span<const int64_t> out_shape) {
  if (into.untyped_data() != y->untyped_data())
    return ffi::Error::Internal("pfft rows: the block written into is not aliased to the output");
  return RowsTransform(stream, x, y, ws, axes, forward, scale, axis, in_start, out_start,
                       out_shape);
}

// The chunk copy in units of T (common/chunk_copy.h, RunsGrid): the grid's x blocks
// share the runs of chunk blockIdx.y; out of the block into the piece, or (kPut) back.
template <typename T, bool kPut>
__global__ void ChunkRuns(const T *__restrict__ from, T *__restrict__ to, pfft::RunsGrid r) {
  pfft::ForEachUnit(r, blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y,
                    [&](long long block, long long piece) {
                      if (kPut) to[block] = from[piece];
                      else to[piece] = from[block];
                    });
}

template <typename T>
void LaunchChunkRuns(cudaStream_t stream, const pfft::RunsGrid &r, long long chunks, bool put,
                     const void *from, void *to) {
  dim3 grid(static_cast<unsigned>(r.col_blocks * r.row_blocks), static_cast<unsigned>(chunks));
  dim3 block(static_cast<unsigned>(r.tx), static_cast<unsigned>(r.ty));
  const T *src = static_cast<const T *>(from);
  T *dst = static_cast<T *>(to);
  if (put) ChunkRuns<T, true><<<grid, block, 0, stream>>>(src, dst, r);
  else ChunkRuns<T, false><<<grid, block, 0, stream>>>(src, dst, r);
}

// The chunk copies (common/chunk_copy.h): out of a block into a piece, or (`put`) from a
// piece back into the block, by one kernel in the widest units the buffers' alignment
// allows (a copy engine's 2-D copy moves narrow runs slowly, and D2D copies at about
// two thirds of a kernel's bandwidth); by one cudaMemcpy2DAsync a chunk beyond the
// grid's 65535 chunks.
ffi::Error CopyChunks(cudaStream_t stream, const pfft::ChunkCopy &g, bool put, const void *from,
                      void *to) {
  if (g.width == 0) return ffi::Error::Success();
  const void *block = put ? to : from, *piece = put ? from : to;
  if (g.chunks <= 65535) {
    pfft::RunsGrid r = pfft::PlanRuns(g, reinterpret_cast<unsigned long long>(block),
                                      reinterpret_cast<unsigned long long>(piece));
    switch (r.unit) {
      case 16: LaunchChunkRuns<uint4>(stream, r, g.chunks, put, from, to); break;
      case 8: LaunchChunkRuns<uint2>(stream, r, g.chunks, put, from, to); break;
      case 4: LaunchChunkRuns<unsigned>(stream, r, g.chunks, put, from, to); break;
      case 2: LaunchChunkRuns<unsigned short>(stream, r, g.chunks, put, from, to); break;
      default: LaunchChunkRuns<unsigned char>(stream, r, g.chunks, put, from, to); break;
    }
    PFFT_CUDA(cudaGetLastError());
    return ffi::Error::Success();
  }
  const char *src = static_cast<const char *>(from);
  char *dst = static_cast<char *>(to);
  for (long long j = 0; j < g.chunks; ++j) {
    pfft::Copy2D c = put ? g.Chunk(j).Reversed() : g.Chunk(j);
    cudaError_t e = cudaMemcpy2DAsync(dst + c.dst, static_cast<size_t>(c.dst_pitch),
                                      src + c.src, static_cast<size_t>(c.src_pitch),
                                      static_cast<size_t>(c.width),
                                      static_cast<size_t>(c.height), cudaMemcpyDeviceToDevice,
                                      stream);
    if (e != cudaSuccess)
      return ffi::Error::Internal(std::string("pfft chunks: ") + cudaGetErrorString(e));
  }
  return ffi::Error::Success();
}

// points start..start + width of every chunk, chunks first
ffi::Error TakeChunksHandler(cudaStream_t stream, ffi::AnyBuffer block,
                             ffi::RemainingArgs /*after*/, ffi::Result<ffi::AnyBuffer> piece,
                             int64_t outer, int64_t chunks, int64_t chunk, int64_t start,
                             int64_t width) {
  pfft::ChunkCopy g;
  std::string err = pfft::ChunkCopyOf(block, *piece, outer, chunks, chunk, start, width, g);
  if (!err.empty()) return ffi::Error::InvalidArgument("pfft chunks: " + err);
  return CopyChunks(stream, g, false, block.untyped_data(), piece->untyped_data());
}

// the piece's points written over y's chunks, the rest of y untouched
ffi::Error PutChunksNewHandler(cudaStream_t stream, ffi::AnyBuffer piece,
                               ffi::RemainingArgs /*after*/, ffi::Result<ffi::AnyBuffer> y,
                               int64_t outer, int64_t chunks, int64_t chunk, int64_t start,
                               int64_t width) {
  pfft::ChunkCopy g;
  std::string err = pfft::ChunkCopyOf(*y, piece, outer, chunks, chunk, start, width, g);
  if (!err.empty()) return ffi::Error::InvalidArgument("pfft chunks: " + err);
  return CopyChunks(stream, g, true, piece.untyped_data(), y->untyped_data());
}

// `into` is aliased to y: XLA has put its values there, the piece goes over them
ffi::Error PutChunksHandler(cudaStream_t stream, ffi::AnyBuffer into, ffi::AnyBuffer piece,
                            ffi::RemainingArgs after, ffi::Result<ffi::AnyBuffer> y,
                            int64_t outer, int64_t chunks, int64_t chunk, int64_t start,
                            int64_t width) {
  if (into.untyped_data() != y->untyped_data())
    return ffi::Error::Internal("pfft chunks: the block written into is not aliased to the output");
  return PutChunksNewHandler(stream, piece, after, y, outer, chunks, chunk, start, width);
}

thread_local std::string last_error;

// The bytes of working memory schedule `s` needs on this thread's current device (its
// copies and the largest work area of its steps' cuFFT plans); -1 on an error, which
// `last_error` tells, prefixed with `who`.
long long WorkspaceBytes(const cs::Schedule &s, bool dbl, const char *who) {
  if (s.steps.empty()) return 0;
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) {
    last_error = std::string(who) + ": " + cudaGetErrorString(e);
    return -1;
  }
  size_t work = 0;
  for (const cs::Step &step : s.steps) {
    size_t bytes = 0;
    cufftResult r = WorkSize(KeyOf(step, dbl, device, nullptr), bytes);
    if (r != CUFFT_SUCCESS) {
      last_error = std::string(who) + ": making a cuFFT plan: " + CufftName(r);
      return -1;
    }
    work = std::max(work, bytes);
  }
  return cs::Arrange(s, RealSize(dbl), static_cast<long long>(work)).total;
}

}  // namespace

#define PFFT_BIND                                      \
  ffi::Ffi::Bind()                                     \
      .Ctx<ffi::PlatformStream<cudaStream_t>>()        \
      .Arg<ffi::AnyBuffer>()                           \
      .Ret<ffi::AnyBuffer>()                           \
      .Ret<ffi::AnyBuffer>()                           \
      .Attr<ffi::Span<const int64_t>>("axes")          \
      .Attr<bool>("forward")                           \
      .Attr<double>("scale")                           \
      .Attr<int64_t>("nthreads")

#pragma GCC visibility push(default)
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftC2C, C2CHandler,
                              PFFT_BIND.Attr<ffi::Span<const int64_t>>("shape"));
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftR2C, Handler<cs::Kind::kR2C>, PFFT_BIND);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftC2R, Handler<cs::Kind::kC2R>, PFFT_BIND);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftC2CRows, RowsHandler,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Arg<ffi::AnyBuffer>()
                                  .RemainingArgs()
                                  .Ret<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>() PFFT_ROWS_ATTRS);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftC2CRowsInto, RowsIntoHandler,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .RemainingArgs()
                                  .Ret<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>() PFFT_ROWS_ATTRS);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftTakeChunks, TakeChunksHandler,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Arg<ffi::AnyBuffer>()
                                  .RemainingArgs()
                                  .Ret<ffi::AnyBuffer>() PFFT_CHUNK_ATTRS);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftPutChunksNew, PutChunksNewHandler,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Arg<ffi::AnyBuffer>()
                                  .RemainingArgs()
                                  .Ret<ffi::AnyBuffer>() PFFT_CHUNK_ATTRS);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftPutChunks, PutChunksHandler,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .RemainingArgs()
                                  .Ret<ffi::AnyBuffer>() PFFT_CHUNK_ATTRS);

// 2: the working memory is the handlers' second output (pfft_cuda_workspace_size)
// 3: the rows handlers (pfft_cuda_rows_workspace_size)
// 4: PfftTakeChunks, the rows' out_shape, operands waited for; 5: by PfftC2CRows too
// 6: PfftPutChunks, operands waited for by PfftTakeChunks; 7: PfftC2C's `shape`;
// 8: PfftPutChunksNew
extern "C" int pfft_cuda_abi_version() { return 8; }

// The bytes of working memory a handler of `kind` (0 c2c, 1 r2c, 2 c2r) needs for a
// block `din` -> `dout` over `axes` (counted from the end), in single (dbl = 0) or double
// precision, on this thread's current device: the size of its second output. -1 on an
// error, which pfft_cuda_last_error() then tells.
extern "C" long long pfft_cuda_workspace_size(int kind, int ndim, const long long *din,
                                              const long long *dout, int naxes,
                                              const long long *axes, int dbl) {
  if (kind < 0 || kind > 2 || ndim < 1 || naxes < 1) {
    last_error = "pfft_cuda_workspace_size: bad arguments";
    return -1;
  }
  std::vector<long long> in(din, din + ndim), out(dout, dout + ndim);
  std::vector<int64_t> given(axes, axes + naxes);
  std::vector<int> ax;
  std::string err = cs::ResolveAxes(given.data(), given.size(), ndim, ax);
  cs::Schedule s;
  auto k = static_cast<cs::Kind>(kind);
  if (err.empty()) err = cs::MakeSchedule(k, in, out, ax, true, 1.0, RealSize(dbl), s);
  if (!err.empty()) {
    last_error = err;
    return -1;
  }
  return WorkspaceBytes(s, dbl != 0, "pfft_cuda_workspace_size");
}
extern "C" const char *pfft_cuda_last_error() { return last_error.c_str(); }

// The bytes of working memory a rows handler needs (its second output): C2C over `axes`
// of rows of `axis` (both counted from the end) from a block `din` to a block `dout`, on
// this thread's current device. -1 on an error (pfft_cuda_last_error).
extern "C" long long pfft_cuda_rows_workspace_size(int ndim, const long long *din,
                                                   const long long *dout, int naxes,
                                                   const long long *axes, long long axis,
                                                   int dbl) {
  if (ndim < 1 || naxes < 1) {
    last_error = "pfft_cuda_rows_workspace_size: bad arguments";
    return -1;
  }
  std::vector<long long> in(din, din + ndim), out(dout, dout + ndim);
  std::vector<int64_t> given(axes, axes + naxes);
  std::vector<int> ax;
  std::string err = cs::ResolveAxes(given.data(), given.size(), ndim, ax);
  int row_axis = static_cast<int>(axis < 0 ? axis + ndim : axis);
  if (err.empty() && (row_axis < 0 || row_axis >= ndim)) err = "pfft rows: row axis out of range";
  cs::Schedule s;
  if (err.empty())
    err = cs::MakeRowsSchedule(in, out, ax, row_axis, std::min(in[row_axis], out[row_axis]), 0,
                               0, true, 1.0, s);
  if (!err.empty()) {
    last_error = err;
    return -1;
  }
  return WorkspaceBytes(s, dbl != 0, "pfft_cuda_rows_workspace_size");
}

// the plan cache: its size now and its bound (for tests and users)
extern "C" long pfft_cuda_plan_cache_size() {
  return static_cast<long>(Cache().size());
}
extern "C" long pfft_cuda_plan_cache_limit() {
  return static_cast<long>(Cache().limit());
}
extern "C" void pfft_cuda_set_plan_cache_size(long limit) {
  Cache().set_limit(static_cast<size_t>(limit > 0 ? limit : 1));
}
#pragma GCC visibility pop
