use gemm_ladder::search::{candidates, Space};
fn main() {
    let c = candidates(&Space::default());
    for s in c.specs.iter() {
        let (b, w, t) = (s.block, s.warp.unwrap(), s.thread.unwrap());
        let pick = std::env::args().nth(1).unwrap();
        let name = format!("{}x{}x{}_{}_{}x{}_{}x{}_{}x{}_{}", b.m, b.n, b.k.unwrap(), b.threads, w.m, w.n, w.m_iters, w.n_iters, t.m, t.n, s.staging.smem_tiles());
        if name == pick {
            let k = gemm_runtime::Kernel::from_spec(s.clone()).unwrap();
            let ptx = gemm_runtime::compile::compile(&k.source, &k.name, "sm_90").unwrap();
            std::fs::write("/tmp/k.ptx", ptx.to_src()).unwrap();
            std::fs::write("/tmp/k.cu", k.source.as_ref()).unwrap();
            println!("{}", k.name);
        }
    }
}
