// by class of lines: C^T = B^T A^T on tiles of 256 rows of C (one class of C's and A's lines)
// by 128 columns. wgmma's A operand is B^T, 64 columns a consumer warpgroup, from registers;
// its B operand is A, 256 lines by descriptor.
// staging (tma): @STAGES stage(s) of the A tile (32768 bytes) and of the B tile (4 boxes of
// 4096 bytes) from a 1024-byte boundary, then C's two buffers of 8192 bytes, then a full and
// an empty mbarrier per stage
extern __shared__ __align__(1024) unsigned char smem_raw[];
const unsigned smem_base = (unsigned)__cvta_generic_to_shared(smem_raw);
const unsigned a_smem = (smem_base + 1023) & ~1023u;
const unsigned b_smem = a_smem + @A_STAGES_BYTES;
const unsigned full = a_smem + @FULL;  // stage s's at full + 8 * s
const unsigned empty = full + @EMPTY;
if (threadIdx.x == 0) {
    for (int s = 0; s < @STAGES; ++s) {
        mbar_init(full + 8 * s, 1);  // the producer's arrival, with the stage's bytes
        mbar_init(empty + 8 * s, 2);  // one release per consumer warpgroup
    }
    mbar_fence_init();
}
__syncthreads();
griddep_wait();  // the stream's previous kernel is complete (at once where not launched dependent)

// schedule (persistent): 16 classes of C's lines (c, c + 16, ...), each in tiles of 256 of its
// lines, by tile columns that start sc[c] columns left of 128-column boundaries (so that C's
// boxes start on 16 bytes: one column more where that needs it); the raster takes bands of 4
// tiles of lines column by column, each band moved one column on from the one before (a block
// would otherwise take the same column in every band where a wave is a band, and the first
// column's stores cost more)
const int tiles_n = (N + 7 + 127) / 128;
const int tiles = 16 * classes.m_tiles * tiles_n;
const auto place = [&](int t, int& c, int& j, int& n0) {
    const int band = t / (4 * tiles_n);
    const int band_rows = 16 * classes.m_tiles - band * 4 < 4 ? 16 * classes.m_tiles - band * 4 : 4;
    const int in_band = (t % (4 * tiles_n) + band * 4) % (band_rows * tiles_n);
    const int mi = band * 4 + in_band % band_rows;
    c = mi % 16;
    j = mi / 16;
    n0 = 128 * (in_band / band_rows) - classes.sc[c];
};
// roles: warpgroup 0 produces (one thread issues the copies), 2 consume
if (threadIdx.x < 128) {
    regs_dec<@PRODUCER_REGS>();  // the producer needs few registers: give them to the consumers
    if (threadIdx.x == 0) {
        int it = 0;  // stages filled so far, over every tile
        for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
            int c, j, n0;
            place(t, c, j, n0);
            for (int kt = 0; kt < classes.k_steps[c]; ++kt, ++it) {
                const int stage = it % @STAGES;
                mbar_wait(empty + 8 * stage, ((it / @STAGES) & 1) ^ 1);  // every consumer has released it
                const unsigned bar = full + 8 * stage;
                mbar_expect_bytes(bar, 49152);
                #pragma unroll
                for (int d = 0; d < 4; ++d) {
                    // B's 32 columns of class d (the tile's first of that class from n0 + (d - n0) mod 4),
                    // each box from the 16-element boundary at or before where A's window needs it
                    const int delta = classes.sb[d] - classes.sa[c];
                    const int off = delta - ((delta % 16) + 16) % 16;
                    const int first = n0 + (((d - n0) % 4) + 4) % 4;
                    tma_load(b_smem + stage * 16384 + d * 4096, classes.b[d], 64 * kt + off, (first - d) / 4, 0, bar);
                }
                // then A: the class's 256 lines, K from sa[c] elements before them (issued after B's
                // boxes, the variant ran 4095 x 4097 x 4100 and 4096 x 4097 x 4096 2% faster)
                tma_load(a_smem + stage * 32768, classes.a[c], 64 * kt, 256 * j, 0, bar);
            }
        }
    }
}
else {
    regs_inc<@CONSUMER_REGS>();
    const int lane = threadIdx.x % 32;
    const int g = threadIdx.x / 128 - 1;  // consumer warpgroup: columns 64 g to 64 g + 63 of the tile
    const int w = (threadIdx.x / 32) % 4;
    const int tid = threadIdx.x % 128;
    int it = 0;  // stages emptied so far, over every tile
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        int c, j, n0;
        place(t, c, j, n0);
        const int k_steps = classes.k_steps[c];
        // this thread's two rows of wgmma's A (columns of B, n0 + 64 g + w + 4 k: warp w's are one
        // class of B's): where they lie in a stage's box, their residual shift (B's window starts
        // res elements into the box), the elements before B's line at the first K step, their column
        unsigned boff[2], bsw[2], bres[2];
        int zero_below[2], n_of[2];
        #pragma unroll
        for (int rr = 0; rr < 2; ++rr) {
            const int d = (((n0 + w) % 4) + 4) % 4, bi = 16 * g + lane / 4 + rr * 8;
            const int delta = classes.sb[d] - classes.sa[c];
            const int res = ((delta % 16) + 16) % 16;
            boff[rr] = d * 4096 + bi * 128;
            bsw[rr] = bi & 7;
            bres[rr] = res;
            zero_below[rr] = classes.sb[d] - (delta - res) - res;
            n_of[rr] = n0 + w + 4 * bi;
        }
        // the stage's 16 loads placed once a tile (worked out at each stage, their shifts,
        // swizzle and selects cost the product a tenth): load s, h, rr reads the stage's box at
        // offs[s][2 h + rr], or the next stage's where its window has crossed into it (only the
        // last 16 elements can: s = 3, nxm all ones); zbits: those zeroed at the first step
        unsigned offs[4][4], nxm[4], zbits = 0;
        #pragma unroll
        for (int s = 0; s < 4; ++s) {
            #pragma unroll
            for (int h = 0; h < 2; ++h) {
                #pragma unroll
                for (int rr = 0; rr < 2; ++rr) {
                    const int jj = 16 * s + 2 * (lane % 4) + 8 * h, pos = jj + bres[rr], q = pos & 63;
                    offs[s][h * 2 + rr] = boff[rr] + (((q >> 3) ^ bsw[rr]) << 4) + (q & 7) * 2;
                    if (s == 3) nxm[h * 2 + rr] = pos >= 64 ? ~0u : 0u;
                    if (jj < zero_below[rr]) zbits |= 1u << (s * 4 + h * 2 + rr);
                }
            }
        }
        // held in registers: left to itself, ptxas works them out again at every stage
        #pragma unroll
        for (int s = 0; s < 4; ++s) {
            #pragma unroll
            for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(offs[s][e]));
        }
        #pragma unroll
        for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(nxm[e]));
        asm volatile("" : "+r"(zbits));
        const bool crosses = (nxm[0] | nxm[1] | nxm[2] | nxm[3]) != 0;
        // accumulators: a wgmma atom of 64 x 256, rows the warpgroup's columns of C, columns the
        // tile's lines; 32 16x8 atoms of 4 floats per lane
        float acc[32][4];
        for (int kt = 0; kt < k_steps; ++kt, ++it) {
            const int stage = it % @STAGES;
            mbar_wait(full + 8 * stage, (it / @STAGES) & 1);
            const unsigned a_st = a_smem + stage * 32768, b_st = b_smem + stage * 16384;
            if (kt == 0 && classes.sa[c] > 0) {
                // A's window starts sa elements before its lines: another line's, zeroed
                const int r = threadIdx.x - 128;
                for (int e = 0; e < classes.sa[c]; e += 2) sts32(a_st + r * 128 + (((e >> 3) ^ (r & 7)) << 4) + (e & 7) * 2, 0u);
                fence_proxy_async();
                consumers_sync();  // every consumer's zeros are in
            }
            const bool has_next = kt + 1 < k_steps;
            // the next stage's distance from this one (a ring of @STAGES)
            const unsigned to_next = ((it + 1) % @STAGES) * 16384 - stage * 16384;
            if (crosses && has_next) mbar_wait(full + 8 * ((it + 1) % @STAGES), ((it + 1) / @STAGES) & 1);
            unsigned af[4][4];
            #pragma unroll
            for (int s = 0; s < 4; ++s) {
                #pragma unroll
                for (int e = 0; e < 4; ++e) af[s][e] = lds32(b_st + offs[s][e] + (s == 3 ? nxm[e] & to_next : 0u));
            }
            if (kt == 0 && zbits != 0) {
                // B's window starts before its line: another line's elements
                #pragma unroll
                for (int s = 0; s < 4; ++s) {
                    #pragma unroll
                    for (int e = 0; e < 4; ++e) if ((zbits >> (s * 4 + e)) & 1) af[s][e] = 0u;
                }
            }
            if (!has_next && crosses) {
                // past the last step's box: past K
                #pragma unroll
                for (int e = 0; e < 4; ++e) af[3][e] &= ~nxm[e];
            }
            wgmma_fence();
            #pragma unroll
            for (int s = 0; s < 4; ++s) wgmma_rs_m64n256k16(acc, af[s], wgmma_desc(a_st + s * 32, 16, 1024), kt > 0 || s > 0);
            wgmma_commit();
            // each stage's wgmmas done before the next stage's registers load (ptxas serializes
            // every wgmma otherwise)
            wgmma_wait<0>();
            if (tid == 0) mbar_arrive(empty + 8 * stage);
        }

        // epilogue (tma by class): C's lines by class mod 16 as A's, each class's map from its first
        // line rounded down to 16 bytes (sc elements before it) to its lines' last whole 16 bytes,
        // so that a box starting 16 bytes aligned (TMA takes no other) writes nothing outside C's
        // lines. Threads store what the boxes cannot: a line's first 8 - sc elements (the
        // warpgroup left of column 0) and its last (N + sc) mod 8. Each warpgroup's 64 columns go
        // a quarter of the 256 rows at a time, through a 64 x 64 buffer in the 128-byte swizzle
        // (a second, so that a quarter's stores run on while the next is written, ran slower); the
        // last quarter's stores run on while the next tile's K loop runs. C = A * B, rounded to @T
        // (nearest even)
        const unsigned buf = a_smem + @C_BUFFERS + g * 8192;
        const int n0w = n0 + 64 * g;
        const bool boxed = n0w >= 0;
        // the columns past the boxes' reach, left to the threads: c_end to N (fewer than 8)
        const int thr_lo = classes.c_end[c] > n0w ? classes.c_end[c] : n0w;
        const int thr_hi = n0w + 64 < N ? n0w + 64 : N;
        #pragma unroll
        for (int qr = 0; qr < 4; ++qr) {
            if (tid == 0) bulk_wait_read<0>();  // the buffer's stores (a quarter back) have read it
            asm volatile("bar.sync %0, 128;\n" :: "r"(2 + g) : "memory");  // and every thread's reads
            #pragma unroll
            for (int qq = 0; qq < 8; ++qq) {
                #pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int row = 8 * qq + 2 * (lane % 4) + (e & 1);
                    const int col = n_of[e >> 1] - n0w;
                    sts16(buf + row * 128 + (((col >> 3) ^ (row & 7)) << 4) + (col & 7) * 2, to_@T(acc[8 * qr + qq][e]));
                }
            }
            fence_proxy_async();  // the buffer, seen by the copy engine
            asm volatile("bar.sync %0, 128;\n" :: "r"(2 + g) : "memory");
            if (boxed && tid == 0) {
                tma_store(classes.c[c], buf, classes.sc[c] + n0w, 256 * j + 64 * qr, 0);
                bulk_commit();
            }
            const unsigned short* const from = reinterpret_cast<const unsigned short*>(smem_raw + (buf - smem_base));
            if (!boxed) {
                // left of the boxes: each line's first 8 - sc elements, an element a thread (a thread
                // storing them in turn cost 4095 x 4097 x 4100 14 us)
                #pragma unroll 1
                for (int i = tid; i < 64 * 8; i += 128) {
                    const int row = i >> 3, n = i & 7, line = 256 * j + 64 * qr + row;
                    if (n < 8 - classes.sc[c] && n < N && line < classes.rows[c])
                        C[(long long)(c + 16 * line) * ldc + n] = from[row * 64 + ((row & 7) << 3) + classes.sc[c] + n];
                }
                // then its 16-byte chunks to column 64 - sc (those wholly before c_end) whole
                #pragma unroll 1
                for (int i = tid; i < 64 * 7; i += 128) {
                    const int row = i / 7, k = 1 + i % 7, line = 256 * j + 64 * qr + row;
                    if (line < classes.rows[c] && 8 * k + 8 <= classes.c_end[c] + classes.sc[c])
                        *reinterpret_cast<uint4*>(C + (long long)(c + 16 * line) * ldc + 8 * k - classes.sc[c]) =
                            *reinterpret_cast<const uint4*>(from + row * 64 + ((k ^ (row & 7)) << 3));
                }
            }
            if (thr_lo < thr_hi) {
                // right of the boxes: each line's last (N + sc) mod 8 elements, one a thread
                #pragma unroll 1
                for (int i = tid; i < 64 * 8; i += 128) {
                    const int row = i >> 3, n = thr_lo + (i & 7), col = n - n0w;
                    const int line = 256 * j + 64 * qr + row;
                    if (n < thr_hi && line < classes.rows[c])
                        C[(long long)(c + 16 * line) * ldc + n] = from[row * 64 + (((col >> 3) ^ (row & 7)) << 3) + (col & 7)];
                }
            }
        }
    }
    if (tid == 0) bulk_wait<0>();  // the last TMA stores are complete
}
