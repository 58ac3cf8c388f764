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
  // GPU one cudaMemcpy2DAsync a chunk).
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
