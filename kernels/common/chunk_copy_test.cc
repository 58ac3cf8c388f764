// The GPU chunk copy's grid (chunk_copy.h: PlanRuns, ForEachUnit), run on the CPU: every
// thread of every block of the grid emulated, for takes and puts over many geometries,
// buffer alignments and grid caps. Checks that the units are as wide as the addresses,
// offsets and runs allow and no wider, that every unit the copy must write is written
// exactly once and nothing else, nothing outside either buffer is touched, and the result
// equals the reference copy (Copy2D runs, as the CPU library copies them).
#include "chunk_copy.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

int failures = 0;

void Fail(const char *what, const pfft::ChunkCopy &g, long long off_block, long long off_piece) {
  if (++failures <= 10)
    std::printf("FAILED %s: outer %lld chunks %lld chunk %lld start %lld width %lld inner %lld "
                "offsets %lld %lld\n", what, g.outer, g.chunks, g.chunk, g.start, g.width,
                g.inner, off_block, off_piece);
}

// The reference: the runs of each chunk, as the CPU library copies them.
void Reference(const pfft::ChunkCopy &g, bool put, const char *from, char *to) {
  for (long long j = 0; j < g.chunks; ++j) {
    pfft::Copy2D c = put ? g.Chunk(j).Reversed() : g.Chunk(j);
    for (long long r = 0; r < c.height; ++r)
      std::memcpy(to + c.dst + r * c.dst_pitch, from + c.src + r * c.src_pitch,
                  static_cast<size_t>(c.width));
  }
}

long long Check(const pfft::ChunkCopy &g, long long off_block, long long off_piece,
                long long max_blocks) {
  long long block_bytes = g.outer * g.chunks * g.chunk * g.inner;
  long long piece_bytes = g.outer * g.chunks * g.width * g.inner;
  std::vector<char> block_store(block_bytes + 32), piece_store(piece_bytes + 32);
  char *block = block_store.data() + off_block, *piece = piece_store.data() + off_piece;
  for (long long i = 0; i < block_bytes; ++i) block[i] = static_cast<char>(i * 7 + 3);
  for (long long i = 0; i < piece_bytes; ++i) piece[i] = static_cast<char>(i * 13 + 5);
  pfft::RunsGrid r = pfft::PlanRuns(g, reinterpret_cast<unsigned long long>(block),
                                    reinterpret_cast<unsigned long long>(piece), max_blocks);
  long long unit = r.unit;
  // the widest unit allowed: no wider one divides every address, offset and run
  long long values[] = {g.width * g.inner, g.start * g.inner, g.chunk * g.inner,
                        g.chunks * g.chunk * g.inner,
                        static_cast<long long>(reinterpret_cast<unsigned long long>(block)),
                        static_cast<long long>(reinterpret_cast<unsigned long long>(piece))};
  bool widest = unit == 16;
  for (long long v : values) {
    if (v % unit != 0) Fail("unit does not divide", g, off_block, off_piece);
    if (v % (2 * unit) != 0) widest = true;
  }
  if (!widest) Fail("unit narrower than allowed", g, off_block, off_piece);
  if (r.tx * r.ty > 1024 || r.col_blocks * r.row_blocks > (1LL << 31) - 1)
    Fail("grid too large", g, off_block, off_piece);
  long long grid_x = r.col_blocks * r.row_blocks;
  for (bool put : {false, true}) {
    std::vector<char> want_store(put ? block_store : piece_store);
    char *want = want_store.data() + (put ? off_block : off_piece);
    std::vector<char> got_store(want_store);
    char *got = got_store.data() + (put ? off_block : off_piece);
    Reference(g, put, put ? piece : block, want);
    long long to_units = (put ? block_bytes : piece_bytes) / unit;
    std::vector<int> writes(static_cast<size_t>(to_units), 0);
    bool outside = false;
    for (long long bx = 0; bx < grid_x; ++bx)
      for (long long j = 0; j < g.chunks; ++j)
        for (long long y = 0; y < r.ty; ++y)
          for (long long x = 0; x < r.tx; ++x)
            pfft::ForEachUnit(r, bx, j, x, y, [&](long long b, long long p) {
              long long dst = put ? b : p, src = put ? p : b;
              long long from_units = (put ? piece_bytes : block_bytes) / unit;
              if (dst < 0 || dst >= to_units || src < 0 || src >= from_units) {
                outside = true;
                return;
              }
              ++writes[static_cast<size_t>(dst)];
              std::memcpy(got + dst * unit, (put ? piece : block) + src * unit,
                          static_cast<size_t>(unit));
            });
    if (outside) Fail(put ? "put outside a buffer" : "take outside a buffer", g, off_block,
                      off_piece);
    if (std::memcmp(got_store.data(), want_store.data(), got_store.size()) != 0)
      Fail(put ? "put differs from the reference" : "take differs from the reference", g,
           off_block, off_piece);
    // each unit of the piece written once (take); each of the block's chunk points once
    // and no other (put)
    long long written = 0;
    for (int w : writes) {
      if (w > 1) Fail("a unit written twice", g, off_block, off_piece);
      written += w;
    }
    if (written * unit != piece_bytes) Fail("not every unit written", g, off_block, off_piece);
  }
  return 1;
}

}  // namespace

int main() {
  long long cases = 0;
  const long long outers[] = {1, 3, 40};
  const long long chunk_counts[] = {1, 3, 8};
  const long long chunk_sizes[] = {1, 2, 5};
  const long long inners[] = {1, 2, 8, 24, 8 * 37};
  const long long offsets[][2] = {{0, 0}, {8, 0}, {16, 1}, {2, 16}};
  for (long long outer : outers)
    for (long long chunks : chunk_counts)
      for (long long chunk : chunk_sizes)
        for (long long inner : inners)
          for (long long start = 0; start < chunk; start += (chunk > 4 ? 3 : 1))
            for (long long width : {1LL, chunk - start}) {
              if (start + width > chunk) continue;
              pfft::ChunkCopy g;
              if (!pfft::MakeChunkCopy(true, outer * chunks * chunk * inner,
                                       outer * chunks * width * inner, outer, chunks, chunk,
                                       start, width, g).empty()) {
                std::printf("FAILED: a consistent geometry refused\n");
                return 1;
              }
              for (const auto &off : offsets)
                for (long long cap : {1LL << 20, 3LL})
                  cases += Check(g, off[0], off[1], cap);
            }
  // long runs: split among blocks (a run of 3000 16-byte units, of 8 x 4000 bytes)
  for (long long inner : {48000LL, 4000LL * 8 + 8})
    for (long long cap : {1LL << 20, 2LL}) {
      pfft::ChunkCopy g;
      pfft::MakeChunkCopy(true, 3 * 2 * 4 * inner, 3 * 2 * 2 * inner, 3, 2, 4, 1, 2, g);
      cases += Check(g, 0, 0, cap);
      cases += Check(g, 8, 16, cap);
    }
  if (failures) {
    std::printf("chunk_copy: %d failures in %lld cases\n", failures, cases);
    return 1;
  }
  std::printf("chunk_copy: %lld cases, all checks hold\n", cases);
  return 0;
}
