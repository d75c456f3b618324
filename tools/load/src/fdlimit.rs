//! Raising `RLIMIT_NOFILE`, so one process can hold tens of thousands of sockets.
//!
//! Child processes inherit the limit, so raising it in `offer-load` before starting the engine
//! and the baseline covers them too (no `ulimit` wrapper needed).

use anyhow::{Context, Result, bail};
use rlimit::Resource;

/// Makes sure this process (and the children it starts afterwards) may open at least `need`
/// files. Raises the hard limit too when allowed (root), else the soft limit up to the hard
/// one; fails with a clear message when that is not enough.
pub fn ensure(need: u64) -> Result<u64> {
    let (soft, hard) = rlimit::getrlimit(Resource::NOFILE).context("reading RLIMIT_NOFILE")?;
    if soft >= need {
        return Ok(soft);
    }
    if hard < need && rlimit::setrlimit(Resource::NOFILE, need, need).is_ok() {
        return Ok(need);
    }
    let got = rlimit::increase_nofile_limit(need).context("raising RLIMIT_NOFILE")?;
    if got < need {
        bail!(
            "RLIMIT_NOFILE is {got} (hard {hard}) but this run needs {need} files: raise the \
             hard limit (ulimit -Hn) or use fewer --sessions"
        );
    }
    Ok(got)
}

/// Raises the soft limit to the hard one (best effort for servers, whose clients decide how
/// many sockets there will be); returns the new soft limit.
pub fn raise_to_hard() -> Result<u64> {
    let (_, hard) = rlimit::getrlimit(Resource::NOFILE).context("reading RLIMIT_NOFILE")?;
    rlimit::increase_nofile_limit(hard).context("raising RLIMIT_NOFILE")
}
