//! What a tensor-parallel layer reports instead of panicking.

use gemm_runtime::GemmError;

#[derive(Debug, thiserror::Error)]
pub enum TpError {
    /// libnccl.so.2 was not found at run time.
    #[error("NCCL was not found (libnccl.so.2 on the library path): tensor-parallel layers need it")]
    NoNccl,
    #[error("NCCL: {0}")]
    Nccl(String),
    #[error(transparent)]
    Gemm(#[from] GemmError),
    /// Arguments that do not fit the layer or the group: what was expected and what was given.
    #[error("{0}")]
    Args(String),
}

impl From<cudarc::driver::DriverError> for TpError {
    fn from(e: cudarc::driver::DriverError) -> Self {
        TpError::Gemm(e.into())
    }
}

impl From<cudarc::nccl::result::NcclError> for TpError {
    fn from(e: cudarc::nccl::result::NcclError) -> Self {
        TpError::Nccl(format!("{e:?}"))
    }
}
