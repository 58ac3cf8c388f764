// pfft GPU engine: XLA FFI handlers running cuFFT on any axes of a row-major block.
//
// Same targets and attributes as kernels/cpu/pfft_cpu.cc (axes counted from the end,
// forward, scale, nthreads [ignored here]):
//   PfftC2C  complex -> complex; in place when XLA aliases output to input
//   PfftR2C  real -> complex, the last listed axis halved
//   PfftC2R  complex -> real, the last listed axis of n real points
//
// How an axis set becomes cuFFT calls: the axes are sorted and cut into runs of
// adjacent axes (at most three, cuFFT's rank limit). A run [a..b] sees the block as
// (outer, n_a..n_b, inner): one cufftPlanMany transforms the run with stride `inner`
// over a batch of `inner` (distance 1) or of `outer` (distance n*inner), and the
// other batch dimension, the smaller one, is a loop of launches. The first run reads
// the input and writes the output (no copy when not aliased), later runs work in place.
// Real transforms do the halved axis as a rank-1 R2C/C2R plan and the other axes as C2C.
// cuFFT has one sign per real transform: the other sign is a conjugation, fused into
// the scaling pass (R2C) or into the copy C2R needs anyway (cuFFT overwrites a C2R input).
//
// Plans live in a cache keyed by (type, geometry, device, stream) behind a mutex;
// each plan has its own mutex for set-stream / set-work-area / exec. Work areas
// come from XLA's ScratchAllocator (cufftSetAutoAllocation(0) + cufftSetWorkArea).

#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <cstdlib>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

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
// $PFFT_CUFFT_PLAN_CACHE or pfft_cuda_set_plan_cache_size says otherwise. An evicted
// plan that a call still holds (shared_ptr) lives until that call ends.
pfft::LruCache<PlanKey, Plan> &Cache() {
  static auto *cache = new pfft::LruCache<PlanKey, Plan>([] {
    const char *env = std::getenv("PFFT_CUFFT_PLAN_CACHE");
    long v = env ? std::strtol(env, nullptr, 10) : 64;
    return static_cast<size_t>(v > 0 ? v : 64);
  }());  // never destroyed: no cufftDestroy after the CUDA runtime has shut down at exit
  return *cache;
}

ffi::Error GetPlan(const PlanKey &key, std::shared_ptr<Plan> &out) {
  out = Cache().Get(key);
  if (out) return ffi::Error::Success();
  auto plan = std::make_shared<Plan>();  // made outside the cache's lock
  PFFT_CUFFT(cufftCreate(&plan->handle));
  PFFT_CUFFT(cufftSetAutoAllocation(plan->handle, 0));
  std::array<long long, 3> n = key.n, embed = key.n;
  PFFT_CUFFT(cufftMakePlanMany64(plan->handle, key.rank, n.data(), embed.data(), key.istride,
                                 key.idist, embed.data(), key.ostride, key.odist, key.type,
                                 key.batch, &plan->work_size));
  out = Cache().Put(key, plan);
  return ffi::Error::Success();
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

unsigned Blocks(long long count) {
  return static_cast<unsigned>(std::min<long long>((count + 255) / 256, 65535));
}

// ---------------------------------------------------------------- geometry

struct Run {
  int a, b;  // first and last axis of a run of adjacent axes
};

// Axes counted from the end -> sorted, checked, runs of adjacent axes (<= 3 long).
ffi::Error Runs(ffi::Span<const int64_t> axes, int ndim, std::vector<int> &resolved,
                std::vector<Run> &runs) {
  resolved.clear();
  for (int64_t a : axes) {
    int64_t r = a < 0 ? a + ndim : a;
    if (r < 0 || r >= ndim) return ffi::Error::InvalidArgument("pfft: axis out of range");
    if (std::find(resolved.begin(), resolved.end(), int(r)) != resolved.end())
      return ffi::Error::InvalidArgument("pfft: repeated axis");
    resolved.push_back(int(r));
  }
  if (resolved.empty()) return ffi::Error::InvalidArgument("pfft: no axes to transform");
  std::vector<int> s(resolved);
  std::sort(s.begin(), s.end());
  runs.clear();
  for (int ax : s) {
    if (!runs.empty() && runs.back().b == ax - 1 && ax - runs.back().a < 3)
      runs.back().b = ax;
    else
      runs.push_back({ax, ax});
  }
  return ffi::Error::Success();
}

long long Prod(const std::vector<long long> &d, int from, int to) {  // [from, to)
  long long p = 1;
  for (int i = from; i < to; ++i) p *= d[i];
  return p;
}

// One cuFFT transform over axes [a..b] of a block of dims `din` (input) / `dout`
// (output; differs from din on axis b only, for R2C/C2R), element sizes in bytes.
ffi::Error ExecRun(cudaStream_t stream, ffi::ScratchAllocator &scratch, cufftType type,
                   int direction, const std::vector<long long> &din,
                   const std::vector<long long> &dout, int a, int b, const void *in,
                   void *out, size_t in_elem, size_t out_elem) {
  int ndim = static_cast<int>(din.size());
  long long outer = Prod(din, 0, a), inner = Prod(din, b + 1, ndim);
  long long run_in = Prod(din, a, b + 1), run_out = Prod(dout, a, b + 1);
  if (outer * run_in * inner == 0) return ffi::Error::Success();
  PlanKey key{};
  key.type = type;
  key.rank = b - a + 1;
  // the logical lengths: for R2C the input's, for C2R the output's (the real side)
  const std::vector<long long> &logical = (type == CUFFT_C2R || type == CUFFT_Z2D) ? dout : din;
  for (int i = 0; i < key.rank; ++i) key.n[i] = logical[a + i];
  for (int i = key.rank; i < 3; ++i) key.n[i] = 1;
  // one batch dimension in the plan, the other a loop of launches (the smaller one)
  bool batch_inner = inner >= outer;
  key.batch = batch_inner ? inner : outer;
  long long loops = batch_inner ? outer : inner;
  key.istride = key.ostride = inner;
  key.idist = batch_inner ? 1 : run_in * inner;
  key.odist = batch_inner ? 1 : run_out * inner;
  long long in_step = batch_inner ? run_in * inner : 1;   // elements between launches
  long long out_step = batch_inner ? run_out * inner : 1;
  PFFT_CUDA(cudaGetDevice(&key.device));
  key.stream = stream;
  std::shared_ptr<Plan> plan;
  PFFT_TRY(GetPlan(key, plan));
  std::lock_guard<std::mutex> lock(plan->mu);
  PFFT_CUFFT(cufftSetStream(plan->handle, stream));
  if (plan->work_size > 0) {
    auto work = scratch.Allocate(plan->work_size, 256);
    if (!work.has_value()) return ffi::Error::Internal("pfft: no scratch for cuFFT work area");
    PFFT_CUFFT(cufftSetWorkArea(plan->handle, *work));
  }
  auto *src = static_cast<char *>(const_cast<void *>(in));
  auto *dst = static_cast<char *>(out);
  for (long long l = 0; l < loops; ++l) {
    void *i = src + l * in_step * in_elem;
    void *o = dst + l * out_step * out_elem;
    switch (type) {
      case CUFFT_C2C:
        PFFT_CUFFT(cufftExecC2C(plan->handle, (cufftComplex *)i, (cufftComplex *)o, direction));
        break;
      case CUFFT_Z2Z:
        PFFT_CUFFT(cufftExecZ2Z(plan->handle, (cufftDoubleComplex *)i, (cufftDoubleComplex *)o,
                                direction));
        break;
      case CUFFT_R2C:
        PFFT_CUFFT(cufftExecR2C(plan->handle, (cufftReal *)i, (cufftComplex *)o));
        break;
      case CUFFT_D2Z:
        PFFT_CUFFT(cufftExecD2Z(plan->handle, (cufftDoubleReal *)i, (cufftDoubleComplex *)o));
        break;
      case CUFFT_C2R:
        PFFT_CUFFT(cufftExecC2R(plan->handle, (cufftComplex *)i, (cufftReal *)o));
        break;
      case CUFFT_Z2D:
        PFFT_CUFFT(cufftExecZ2D(plan->handle, (cufftDoubleComplex *)i, (cufftDoubleReal *)o));
        break;
      default:
        return ffi::Error::Internal("pfft: unknown cuFFT type");
    }
  }
  return ffi::Error::Success();
}

// C2C over `runs`, the first from `in` to `out`, the rest in place on `out`.
ffi::Error ComplexRuns(cudaStream_t stream, ffi::ScratchAllocator &scratch, bool dbl,
                       int direction, const std::vector<long long> &dims,
                       const std::vector<Run> &runs, const void *in, void *out) {
  cufftType t = dbl ? CUFFT_Z2Z : CUFFT_C2C;
  size_t e = dbl ? sizeof(cufftDoubleComplex) : sizeof(cufftComplex);
  for (size_t r = 0; r < runs.size(); ++r)
    PFFT_TRY(ExecRun(stream, scratch, t, direction, dims, dims, runs[r].a, runs[r].b,
                     r == 0 ? in : out, out, e, e));
  return ffi::Error::Success();
}

template <typename C>
void LaunchScaleConj(cudaStream_t s, void *x, long long count, double scale, bool conj) {
  if (scale == 1.0 && !conj) return;
  ScaleConj<C><<<Blocks(count), 256, 0, s>>>(static_cast<C *>(x), count, scale, conj);
}

std::vector<long long> Dims(ffi::Span<const int64_t> d) { return {d.begin(), d.end()}; }

// Runs over `axes` minus `skip`.
std::vector<Run> RunsWithout(const std::vector<int> &axes, int skip) {
  std::vector<int> s;
  for (int a : axes) if (a != skip) s.push_back(a);
  std::sort(s.begin(), s.end());
  std::vector<Run> runs;
  for (int ax : s) {
    if (!runs.empty() && runs.back().b == ax - 1 && ax - runs.back().a < 3) runs.back().b = ax;
    else runs.push_back({ax, ax});
  }
  return runs;
}

// ---------------------------------------------------------------- handlers

ffi::Error C2CImpl(cudaStream_t stream, ffi::ScratchAllocator scratch, ffi::AnyBuffer x,
                   ffi::Result<ffi::AnyBuffer> y, ffi::Span<const int64_t> axes, bool forward,
                   double scale, int64_t /*nthreads*/) {
  bool dbl = x.element_type() == ffi::DataType::C128;
  if (!dbl && x.element_type() != ffi::DataType::C64)
    return ffi::Error::InvalidArgument("pfft c2c: complex64 or complex128 only");
  auto dims = Dims(x.dimensions());
  std::vector<int> ax;
  std::vector<Run> runs;
  PFFT_TRY(Runs(axes, int(dims.size()), ax, runs));
  // aliased (donated): every run in place; not aliased: the first run writes y
  PFFT_TRY(ComplexRuns(stream, scratch, dbl, forward ? CUFFT_FORWARD : CUFFT_INVERSE, dims,
                       runs, x.untyped_data(), y->untyped_data()));
  long long count = static_cast<long long>(x.element_count());
  if (dbl) LaunchScaleConj<cufftDoubleComplex>(stream, y->untyped_data(), count, scale, false);
  else LaunchScaleConj<cufftComplex>(stream, y->untyped_data(), count, scale, false);
  PFFT_CUDA(cudaGetLastError());
  return ffi::Error::Success();
}

ffi::Error R2CImpl(cudaStream_t stream, ffi::ScratchAllocator scratch, ffi::AnyBuffer x,
                   ffi::Result<ffi::AnyBuffer> y, ffi::Span<const int64_t> axes, bool forward,
                   double scale, int64_t /*nthreads*/) {
  bool dbl = x.element_type() == ffi::DataType::F64;
  if (!(dbl ? y->element_type() == ffi::DataType::C128
            : (x.element_type() == ffi::DataType::F32 && y->element_type() == ffi::DataType::C64)))
    return ffi::Error::InvalidArgument("pfft r2c: float32->complex64 or float64->complex128");
  auto din = Dims(x.dimensions()), dout = Dims(y->dimensions());
  std::vector<int> ax;
  std::vector<Run> runs;
  PFFT_TRY(Runs(axes, int(din.size()), ax, runs));
  int h = ax.back();
  if (dout.size() != din.size() || dout[h] != din[h] / 2 + 1)
    return ffi::Error::InvalidArgument("pfft r2c: output must halve the last axis");
  size_t re = dbl ? sizeof(double) : sizeof(float);
  size_t ce = dbl ? sizeof(cufftDoubleComplex) : sizeof(cufftComplex);
  PFFT_TRY(ExecRun(stream, scratch, dbl ? CUFFT_D2Z : CUFFT_R2C, CUFFT_FORWARD, din, dout, h, h,
                   x.untyped_data(), y->untyped_data(), re, ce));
  auto rest = RunsWithout(ax, h);
  if (!rest.empty())
    PFFT_TRY(ComplexRuns(stream, scratch, dbl, CUFFT_FORWARD, dout, rest, y->untyped_data(),
                         y->untyped_data()));
  long long count = static_cast<long long>(y->element_count());
  // the + sign of a real input's transform is the conjugate of the - sign
  if (dbl) LaunchScaleConj<cufftDoubleComplex>(stream, y->untyped_data(), count, scale, !forward);
  else LaunchScaleConj<cufftComplex>(stream, y->untyped_data(), count, scale, !forward);
  PFFT_CUDA(cudaGetLastError());
  return ffi::Error::Success();
}

ffi::Error C2RImpl(cudaStream_t stream, ffi::ScratchAllocator scratch, ffi::AnyBuffer x,
                   ffi::Result<ffi::AnyBuffer> y, ffi::Span<const int64_t> axes, bool forward,
                   double scale, int64_t /*nthreads*/) {
  bool dbl = x.element_type() == ffi::DataType::C128;
  if (!(dbl ? y->element_type() == ffi::DataType::F64
            : (x.element_type() == ffi::DataType::C64 && y->element_type() == ffi::DataType::F32)))
    return ffi::Error::InvalidArgument("pfft c2r: complex64->float32 or complex128->float64");
  auto din = Dims(x.dimensions()), dout = Dims(y->dimensions());
  std::vector<int> ax;
  std::vector<Run> runs;
  PFFT_TRY(Runs(axes, int(din.size()), ax, runs));
  int h = ax.back();
  if (dout.size() != din.size() || din[h] != dout[h] / 2 + 1)
    return ffi::Error::InvalidArgument("pfft c2r: input must hold n//2+1 bins on the last axis");
  // cuFFT overwrites a C2R input: work on a scratch copy (conjugated for the - sign,
  // since the - sign transform of Hermitian z is the + sign transform of conj(z))
  size_t bytes = x.size_bytes();
  long long count = static_cast<long long>(x.element_count());
  if (count == 0) return ffi::Error::Success();
  auto tmp = scratch.Allocate(bytes, 256);
  if (!tmp.has_value()) return ffi::Error::Internal("pfft c2r: no scratch for the input copy");
  if (forward) {
    if (dbl) CopyConj<cufftDoubleComplex><<<Blocks(count), 256, 0, stream>>>(
        static_cast<const cufftDoubleComplex *>(x.untyped_data()),
        static_cast<cufftDoubleComplex *>(*tmp), count);
    else CopyConj<cufftComplex><<<Blocks(count), 256, 0, stream>>>(
        static_cast<const cufftComplex *>(x.untyped_data()), static_cast<cufftComplex *>(*tmp),
        count);
  } else {
    PFFT_CUDA(cudaMemcpyAsync(*tmp, x.untyped_data(), bytes, cudaMemcpyDeviceToDevice, stream));
  }
  auto rest = RunsWithout(ax, h);
  if (!rest.empty())
    PFFT_TRY(ComplexRuns(stream, scratch, dbl, CUFFT_INVERSE, din, rest, *tmp, *tmp));
  size_t re = dbl ? sizeof(double) : sizeof(float);
  size_t ce = dbl ? sizeof(cufftDoubleComplex) : sizeof(cufftComplex);
  PFFT_TRY(ExecRun(stream, scratch, dbl ? CUFFT_Z2D : CUFFT_C2R, CUFFT_INVERSE, din, dout, h, h,
                   *tmp, y->untyped_data(), ce, re));
  long long n_out = static_cast<long long>(y->element_count());
  if (scale != 1.0) {
    if (dbl) Scale<double><<<Blocks(n_out), 256, 0, stream>>>(
        static_cast<double *>(y->untyped_data()), n_out, scale);
    else Scale<float><<<Blocks(n_out), 256, 0, stream>>>(
        static_cast<float *>(y->untyped_data()), n_out, scale);
  }
  PFFT_CUDA(cudaGetLastError());
  return ffi::Error::Success();
}

}  // namespace

#define PFFT_BIND                                      \
  ffi::Ffi::Bind()                                     \
      .Ctx<ffi::PlatformStream<cudaStream_t>>()        \
      .Ctx<ffi::ScratchAllocator>()                    \
      .Arg<ffi::AnyBuffer>()                           \
      .Ret<ffi::AnyBuffer>()                           \
      .Attr<ffi::Span<const int64_t>>("axes")          \
      .Attr<bool>("forward")                           \
      .Attr<double>("scale")                           \
      .Attr<int64_t>("nthreads")

#pragma GCC visibility push(default)
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftC2C, C2CImpl, PFFT_BIND);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftR2C, R2CImpl, PFFT_BIND);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftC2R, C2RImpl, PFFT_BIND);

extern "C" int pfft_cuda_abi_version() { return 1; }
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
