// pfft GPU engine: XLA FFI handlers running cuFFT on any axes of a row-major block.
//
// Three handlers, exported with C linkage (loaded with ctypes, registered through
// jax.ffi.pycapsule), with the targets and attributes of kernels/cpu/pfft_cpu.cc's
// handlers of the same names. Each takes one operand and returns two results: the
// transform, and its working memory (below).
//
//   PfftC2C  complex -> complex (complex64 or complex128), the result of the operand's
//            shape and type: in place when XLA aliases the result to the operand
//            (input_output_aliases={0: 0}), else out of place.
//            Attributes: axes, forward, scale, nthreads.
//   PfftR2C  real -> complex (float32 -> complex64, float64 -> complex128), the last
//            listed axis of n real points giving n//2+1 bins, the other axes unchanged.
//            Attributes: axes, forward, scale, nthreads.
//   PfftC2R  complex -> real (complex64 -> float32, complex128 -> float64), n//2+1 bins
//            of the last listed axis giving its n real points (n is the result's
//            length there), the other axes unchanged; the operand is not written.
//            Attributes: axes, forward, scale, nthreads.
//
// Attributes:
//   axes      int64 array, the transformed axes; negative values count from the end.
//             Each axis at most once, at least one.
//   forward   bool; true: exp(-2 pi i jk/n) sign, false: exp(+2 pi i jk/n)
//   scale     float64; multiplies the result; the transform itself is unnormalised
//   nthreads  int64; ignored here (the CPU library's thread count)
//
// Every element of the first result is written: each step of a schedule writes every
// element of its output (kernels/common/cufft_schedule_test.cc checks it), and nothing
// the caller left in the buffer is kept (in place, the operand's values are read and
// then written over). An r2c over zero real points (an operand with nothing along the
// halved axis) writes each line's one bin as 0, the empty sum. The second result is
// scratch: its bytes are undefined after the call, and pfft discards it.
//
// How an axis set becomes cuFFT calls is kernels/common/cufft_schedule.h, pure C++ that
// kernels/common/cufft_schedule_test.cc checks on the CPU: runs of up to three adjacent
// axes, each one cufftPlanMany over one batch dimension and a loop of launches over the
// other; real transforms as a rank-1 R2C/C2R plan on the halved axis and C2C on the rest;
// the sign cuFFT lacks for real transforms as a conjugation, fused into the scaling pass
// (R2C) or into the input copy C2R needs anyway (cuFFT overwrites a C2R input); a C2R's
// zero and Nyquist bins made real in that copy before the C2R step (numpy's irfftn of a
// half spectrum that is not Hermitian). This file only executes such a schedule.
//
// Plans live in a bounded LRU cache (kernels/common/lru_cache.h) keyed by (type,
// geometry, device, stream); each plan has its own mutex for set-stream /
// set-work-area / exec.
//
// Working memory (the C2R input copy, a pitched copy of a real side, cuFFT's work area:
// cufftSetAutoAllocation(0) + cufftSetWorkArea) is the second result of the custom call,
// a uint8 buffer XLA allocates like any other: pfft_cuda_workspace_size() tells Python
// its size when the call is traced. Under vmap pfft makes the call on the batched
// block, sized anew.
//
// Also exported: pfft_cuda_abi_version (the calling convention, checked by
// pfft/engines/_kernels.py), pfft_cuda_workspace_size, pfft_cuda_last_error, and the
// plan cache's pfft_cuda_plan_cache_size, pfft_cuda_plan_cache_limit and
// pfft_cuda_set_plan_cache_size.

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

#include "../common/cufft_schedule.h"
#include "../common/lru_cache.h"
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

template <typename T>
__global__ void CopyConj(const T *in, T *out, long long count) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    T v = in[i];
    v.y = -v.y;
    out[i] = v;
  }
}

// The imaginary parts of the bins `bins` names (cufft_schedule.h's RealBins) set to 0.
template <typename T>
__global__ void ZeroImag(T *x, pfft::cufft_schedule::RealBins bins) {
  long long count = bins.count();
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x)
    x[bins.element(i)].y = 0;
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
  auto buffer = [&](cs::Buffer b) -> void * {
    switch (b) {
      case cs::Buffer::kIn: return const_cast<void *>(x);
      case cs::Buffer::kOut: return y;
      case cs::Buffer::kTmp: return tmp;
      default: return pitched;
    }
  };
  for (size_t i = 0; i < s.steps.size(); ++i) {
    if (s.steps[i].kind == cs::Kind::kC2R && s.real_bins.count() > 0) {
      long long zeros = s.real_bins.count();
      if (dbl)
        ZeroImag<cufftDoubleComplex><<<Blocks(zeros), 256, 0, stream>>>(
            static_cast<cufftDoubleComplex *>(tmp), s.real_bins);
      else
        ZeroImag<cufftComplex><<<Blocks(zeros), 256, 0, stream>>>(
            static_cast<cufftComplex *>(tmp), s.real_bins);
    }
    PFFT_TRY(ExecStep(stream, *p.plans[i], work, dbl, s.steps[i], buffer(s.steps[i].src),
                      buffer(s.steps[i].dst)));
  }
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
  } else if (s.scale != 1.0 || s.conj_out) {
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
// working memory, pfft_cuda_workspace_size() bytes for this block. Every element of y
// written: by the schedule's steps, or (an r2c of zero points) as 0.
ffi::Error Transform(cs::Kind kind, cudaStream_t stream, ffi::AnyBuffer x,
                     ffi::Result<ffi::AnyBuffer> y, ffi::Result<ffi::AnyBuffer> ws,
                     ffi::Span<const int64_t> axes, bool forward, double scale) {
  bool dbl = false;
  if (const char *types = TypesError(kind, x.element_type(), y->element_type(), dbl))
    return ffi::Error::InvalidArgument(types);
  auto din = Dims(x.dimensions()), dout = Dims(y->dimensions());
  std::vector<int> ax;
  std::string err = cs::ResolveAxes(axes.begin(), axes.size(), int(din.size()), ax);
  if (!err.empty()) return ffi::Error::InvalidArgument(err);
  Prepared p;
  PFFT_TRY(Prepare(kind, dbl, din, dout, ax, forward, scale, stream, p));
  if (p.s.zero_out) {  // no point to transform: each bin the empty sum
    PFFT_CUDA(cudaMemsetAsync(y->untyped_data(), 0, y->size_bytes(), stream));
    return ffi::Error::Success();
  }
  if (p.s.steps.empty()) return ffi::Error::Success();  // an empty result
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
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftC2C, Handler<cs::Kind::kC2C>, PFFT_BIND);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftR2C, Handler<cs::Kind::kR2C>, PFFT_BIND);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftC2R, Handler<cs::Kind::kC2R>, PFFT_BIND);

// The version of this library's calling convention (its handlers, their operands,
// results and attributes, and the exported functions), checked by
// pfft/engines/_kernels.py against ABI_VERSIONS["cuda"]; raised with any change to them.
extern "C" int pfft_cuda_abi_version() { return 9; }

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
