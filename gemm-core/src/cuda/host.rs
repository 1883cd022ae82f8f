//! Generated code run on the host, for tests: a C++ program built by the
//! host compiler (`c++`) and run, its standard output returned.

/// Builds `program` (C++, with whatever shims it needs in front) in a
/// temporary folder named for `tag`, runs it and returns what it printed.
/// (Each call a folder of its own: tests running at once may build
/// programs of one tag.)
pub fn run_cpp(tag: &str, program: &str) -> String {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("gemm-{tag}-{}-{call}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("main.cpp"), program).unwrap();
    let built = std::process::Command::new("c++").arg("-O1").arg("-pthread").arg("-o").arg(dir.join("main")).arg(dir.join("main.cpp")).output();
    let built = built.expect("a host C++ compiler (c++)");
    assert!(built.status.success(), "{tag}: the program compiles as C++: {}\n{program}", String::from_utf8_lossy(&built.stderr));
    let out = std::process::Command::new(dir.join("main")).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(out.stdout).unwrap()
}

/// Host stand-ins for what generated code that places a tile uses: the
/// block and grid indices, `__ldg`, and a warp's intrinsics (`__shfl_sync`,
/// `__shfl_up_sync`, `__ballot_sync`, `__ffs`), one warp being 32 host
/// threads that meet at each intrinsic. `run_warp(f)` runs `f` on the 32
/// lanes of the block `blockIdx` names (set it first) and waits for them;
/// code with no warp intrinsics may run on the calling thread alone.
pub const WARP_SHIM: &str = r#"#include <cstdio>
#include <algorithm>
#include <thread>
#include <mutex>
#include <condition_variable>
using std::min;
using std::max;
struct Dim3 { unsigned x, y, z; };
static Dim3 blockIdx, gridDim;
static thread_local Dim3 threadIdx;
static int __ldg(const int* p) { return *p; }
static int __ffs(unsigned x) { return __builtin_ffs((int)x); }
static std::mutex warp_mutex;
static std::condition_variable warp_cv;
static int warp_arrived = 0;
static unsigned warp_phase = 0;
static long long warp_values[32];
// every lane waits here until all 32 have arrived
static void warp_meet() {
    std::unique_lock<std::mutex> lock(warp_mutex);
    const unsigned phase = warp_phase;
    if (++warp_arrived == 32) { warp_arrived = 0; ++warp_phase; warp_cv.notify_all(); }
    else warp_cv.wait(lock, [&] { return warp_phase != phase; });
}
// each lane offers v and takes lane src's
static long long warp_exchange(long long v, int src) {
    warp_values[threadIdx.x % 32] = v;
    warp_meet();
    const long long got = warp_values[src];
    warp_meet();
    return got;
}
static int __shfl_sync(unsigned, int v, int src) { return (int)warp_exchange(v, src); }
static int __shfl_up_sync(unsigned, int v, int d) { const int lane = threadIdx.x % 32; return (int)warp_exchange(v, lane >= d ? lane - d : lane); }
static unsigned __ballot_sync(unsigned, bool p) {
    warp_values[threadIdx.x % 32] = p;
    warp_meet();
    unsigned bits = 0;
    for (int l = 0; l < 32; ++l) bits |= warp_values[l] ? 1u << l : 0u;
    warp_meet();
    return bits;
}
template <class F> static void run_warp(F f) {
    std::thread lanes[32];
    for (unsigned l = 0; l < 32; ++l) lanes[l] = std::thread([=] { threadIdx = Dim3{l, 0, 0}; f(); });
    for (auto& t : lanes) t.join();
}
"#;

/// The tiles a walk printed, one `group block_m block_n M` line each, sorted.
#[cfg(test)]
pub fn printed_tiles(out: &str) -> Vec<(i32, i32, i32, i32)> {
    let mut tiles: Vec<(i32, i32, i32, i32)> = out
        .lines()
        .map(|l| {
            let v: Vec<i32> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            (v[0], v[1], v[2], v[3])
        })
        .collect();
    tiles.sort();
    tiles
}

/// The tiles (group, block_m, block_n, the M its guards stop at) each
/// group's rows `[start, end)` should take in `bm x bn` tiles of an `n`
/// wide C: its row tiles from `start` on (the last one partial), times N's,
/// each once; sorted.
#[cfg(test)]
pub fn group_tiles(groups: &[(i32, usize, usize)], n: usize, (bm, bn): (usize, usize)) -> Vec<(i32, i32, i32, i32)> {
    let mut tiles = Vec::new();
    for &(g, start, end) in groups {
        for row in (start..end).step_by(bm) {
            for col in (0..n).step_by(bn) {
                tiles.push((g, row as i32, col as i32, end as i32));
            }
        }
    }
    tiles.sort();
    tiles
}
