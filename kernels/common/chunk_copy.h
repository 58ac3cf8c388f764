// The geometry of the chunk copies (PfftTakeChunks, and PfftPutChunks, the same copy
// the other way), the same in the CPU and the GPU library.
//
// A block is seen as (outer, chunks, chunk, inner): an axis of chunks * chunk points with
// `outer` points of the axes before it and `inner` bytes after it. Points start..start +
// width of every chunk make a piece laid out as (chunks, outer, width, inner): the chunk
// axis first, as an all-to-all sends it (its chunk j to device j) and receives it (from
// device j). The copy is runs of width * inner contiguous bytes on both sides.
#pragma once

#include <cstdint>
#include <string>

#if defined(__CUDACC__)
#define PFFT_HOST_DEVICE __host__ __device__
#else
#define PFFT_HOST_DEVICE
#endif

namespace pfft {

// One strided copy: `height` runs of `width` bytes, run r from src + r * src_pitch to
// dst + r * dst_pitch (offsets in bytes; cudaMemcpy2D's terms).
struct Copy2D {
  long long dst = 0, dst_pitch = 0, src = 0, src_pitch = 0, width = 0, height = 0;

  // The same runs copied back: from where this copy writes to where it reads.
  Copy2D Reversed() const {
    Copy2D c = *this;
    c.dst = src;
    c.dst_pitch = src_pitch;
    c.src = dst;
    c.src_pitch = dst_pitch;
    return c;
  }
};

struct ChunkCopy {
  long long outer = 0, chunks = 0, chunk = 0, start = 0, width = 0, inner = 0;  // inner: bytes

  // Chunk j's part of the piece as one strided copy from the block: its `outer` runs,
  // one a point of the axes before the chunked axis, each `width * inner` bytes,
  // contiguous in the piece and a whole axis apart in the block (a put copies
  // Chunk(j).Reversed()). Both libraries copy exactly these (the CPU run by run, the
  // GPU one kernel over every chunk, PlanRuns below).
  Copy2D Chunk(long long j) const {
    Copy2D c;
    c.width = width * inner;
    c.height = outer;
    c.dst = j * outer * c.width;
    c.dst_pitch = c.width;
    c.src = (j * chunk + start) * inner;
    c.src_pitch = chunks * chunk * inner;
    return c;
  }
};

// A chunk copy as the GPU kernel makes it: in units of `unit` bytes (the largest of 16,
// 8, 4, 2 and 1 that divides both buffers' addresses and every offset, pitch and run),
// each run `run` units, run r of chunk j at piece unit (j * outer + r) * run and block
// unit j * chunk_stride + start + r * pitch. Threads: blocks of tx x ty, each thread row
// (ty of them) one run at a time, its tx threads along it; a run's units split among
// col_blocks blocks of cols_per_block units (a long run), the runs of a chunk among
// row_blocks; the grid is col_blocks * row_blocks blocks by chunks. No division per
// unit copied: one per thread block.
struct RunsGrid {
  int unit = 1, tx = 1, ty = 1;
  long long outer = 0, run = 0, chunk_stride = 0, start = 0, pitch = 0;
  long long cols_per_block = 0, col_blocks = 1, row_blocks = 1;
};

inline long long CommonPowerOfTwo(long long v, long long at_most) {
  long long unit = at_most;
  while (unit > 1 && v % unit != 0) unit /= 2;
  return unit;
}

// The grid for copy `g` between a block at address `block_at` and a piece at `piece_at`,
// at most about `max_blocks` blocks a chunk (more rows than that: each block's threads
// take every row_blocks-th stretch of rows).
inline RunsGrid PlanRuns(const ChunkCopy &g, unsigned long long block_at,
                         unsigned long long piece_at, long long max_blocks = 1LL << 20) {
  long long bytes[] = {g.width * g.inner, g.start * g.inner, g.chunk * g.inner,
                       g.chunks * g.chunk * g.inner, static_cast<long long>(block_at % 16),
                       static_cast<long long>(piece_at % 16)};
  long long unit = 16;
  for (long long v : bytes) unit = CommonPowerOfTwo(v, unit);
  RunsGrid r;
  r.unit = static_cast<int>(unit);
  r.outer = g.outer;
  r.run = g.width * g.inner / unit;
  r.chunk_stride = g.chunk * g.inner / unit;
  r.start = g.start * g.inner / unit;
  r.pitch = g.chunks * g.chunk * g.inner / unit;
  const int threads = 256;
  if (r.run >= threads) {          // long runs: a block a stretch of one run at a time
    r.tx = threads;
    r.ty = 1;
    r.cols_per_block = threads * 8LL;
  } else {                         // short runs: a block ty of them at a time
    r.tx = 1;
    while (r.tx < r.run) r.tx *= 2;
    r.ty = threads / r.tx;
    r.cols_per_block = r.run > 0 ? r.run : 1;
  }
  r.col_blocks = (r.run + r.cols_per_block - 1) / r.cols_per_block;
  if (r.col_blocks < 1) r.col_blocks = 1;
  long long rows = (g.outer + r.ty - 1) / r.ty;
  long long most = max_blocks / r.col_blocks;    // the default: enough to fill any GPU
  r.row_blocks = rows < most ? rows : (most > 0 ? most : 1);
  return r;
}

// What thread (x, y) of grid block (bx, chunk j) copies under `r`: copy(block unit,
// piece unit) for each unit of its share, run by run.
template <class Copy>
PFFT_HOST_DEVICE inline void ForEachUnit(const RunsGrid &r, long long bx, long long j,
                                         long long x, long long y, Copy &&copy) {
  long long cb = bx % r.col_blocks, rb = bx / r.col_blocks;
  long long c0 = cb * r.cols_per_block;
  long long c1 = c0 + r.cols_per_block < r.run ? c0 + r.cols_per_block : r.run;
  for (long long row = rb * r.ty + y; row < r.outer; row += r.row_blocks * r.ty) {
    long long b = j * r.chunk_stride + r.start + row * r.pitch;
    long long p = (j * r.outer + row) * r.run;
    for (long long c = c0 + x; c < c1; c += r.tx) copy(b + c, p + c);
  }
}

// Fills `g` for a block of `block_bytes` and a piece of `piece_bytes` (`same_type`:
// whether the two hold one element type); an error message, empty where the geometry is
// consistent.
inline std::string MakeChunkCopy(bool same_type, long long block_bytes, long long piece_bytes,
                                 int64_t outer, int64_t chunks, int64_t chunk, int64_t start,
                                 int64_t width, ChunkCopy &g) {
  if (!same_type) return "the piece's type is not the block's";
  if (outer < 1 || chunks < 1 || chunk < 1 || width < 0 || start < 0 || start + width > chunk)
    return "points " + std::to_string(start) + ".." + std::to_string(start + width) +
           " of chunks of " + std::to_string(chunk) + " (" + std::to_string(chunks) +
           " chunks, " + std::to_string(outer) + " outer points)";
  long long runs = static_cast<long long>(outer) * chunks * chunk;
  if (block_bytes % runs != 0) return "the block is not a whole number of chunk rows";
  g.outer = outer;
  g.chunks = chunks;
  g.chunk = chunk;
  g.start = start;
  g.width = width;
  g.inner = block_bytes / runs;
  if (piece_bytes != static_cast<long long>(outer) * chunks * width * g.inner)
    return "the piece's size does not match the block's chunks";
  return "";
}

// The same from the two buffers of a handler (XLA FFI buffers: element_type(),
// size_bytes()), `block` the one whose chunks hold the points.
template <typename Block, typename Piece>
std::string ChunkCopyOf(const Block &block, const Piece &piece, int64_t outer, int64_t chunks,
                        int64_t chunk, int64_t start, int64_t width, ChunkCopy &g) {
  return MakeChunkCopy(block.element_type() == piece.element_type(),
                       static_cast<long long>(block.size_bytes()),
                       static_cast<long long>(piece.size_bytes()), outer, chunks, chunk, start,
                       width, g);
}

}  // namespace pfft
