//! Keeps `SIGPIPE` away from the game that hosts the SDK.
//!
//! A write to a socket whose peer has gone (the engine closing a connection mid-upload, a
//! restart, a network drop) raises `SIGPIPE`, whose default action ends the process. Rust
//! binaries ignore it before `main`, but the SDK also runs inside C, C++ and engine hosts that
//! keep the default, so it must not rely on that. On Linux and Android the HTTP client writes
//! request bodies with `writev`, which has no `MSG_NOSIGNAL` flag; on Apple platforms the
//! sockets are already made with `SO_NOSIGPIPE` by the crates that open them (`socket2` for
//! HTTP, `mio` for the WebSocket), but nothing else covers every platform.
//!
//! So every thread of the SDK blocks `SIGPIPE` for itself ([`block_on_this_thread`], first
//! thing on the SDK's thread; the threads its runtime starts later inherit the mask). The
//! game's own threads keep whatever the game set. A `SIGPIPE` the kernel raises for a write of
//! a thread that blocks it is directed at that thread and stays pending there instead of
//! being delivered, while the write itself fails with `EPIPE`, which the SDK handles as any
//! lost connection. [`discard_pending`] takes such a pending signal off the thread after a
//! failed request, so none is ever left to fire should the mask change.
//!
//! This module allows `unsafe_code` for itself (the crate denies it elsewhere): the signal
//! calls are C functions of `libc`. Each `unsafe` block says why it is sound.
#![allow(unsafe_code)]

/// Blocks `SIGPIPE` on the calling thread (and so on the threads it starts afterwards).
/// Returns the OS error when the mask cannot be changed.
#[cfg(unix)]
pub fn block_on_this_thread() -> std::io::Result<()> {
    let set = sigpipe_set()?;
    // SAFETY: `set` is an initialised signal set living for the call; a null old-set pointer
    // is allowed and means the previous mask is not returned.
    let rc =
        unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &raw const set, std::ptr::null_mut()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::from_raw_os_error(rc))
    }
}

/// Takes a pending `SIGPIPE` off the calling thread, if there is one; returns whether there
/// was. Call it only on a thread that blocks `SIGPIPE` ([`block_on_this_thread`]): there a
/// pending one is never delivered, and this never waits.
#[cfg(unix)]
pub fn discard_pending() -> bool {
    let Ok(wanted) = sigpipe_set() else {
        return false;
    };
    let mut pending = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: `sigpending` fills the set `pending` points to, which is valid for writes.
    if unsafe { libc::sigpending(pending.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: `sigpending` returned 0, so it initialised the set.
    let pending = unsafe { pending.assume_init() };
    // SAFETY: `pending` is an initialised set; `sigismember` only reads it.
    if unsafe { libc::sigismember(&raw const pending, libc::SIGPIPE) } != 1 {
        return false;
    }
    let mut taken: libc::c_int = 0;
    // SAFETY: `wanted` holds only SIGPIPE, which is pending and blocked on this thread, so
    // `sigwait` returns at once with it; `taken` is valid for writes.
    unsafe { libc::sigwait(&raw const wanted, &raw mut taken) == 0 }
}

/// The set holding `SIGPIPE` alone.
#[cfg(unix)]
fn sigpipe_set() -> std::io::Result<libc::sigset_t> {
    let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: `sigemptyset` initialises the set `set` points to, which is valid for writes.
    if unsafe { libc::sigemptyset(set.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `sigemptyset` succeeded, so the set is initialised.
    let mut set = unsafe { set.assume_init() };
    // SAFETY: `set` is an initialised set and SIGPIPE a valid signal number.
    if unsafe { libc::sigaddset(&raw mut set, libc::SIGPIPE) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(set)
}

/// No `SIGPIPE` off Unix: nothing to block.
#[cfg(not(unix))]
pub fn block_on_this_thread() -> std::io::Result<()> {
    Ok(())
}

/// No `SIGPIPE` off Unix: nothing is ever pending.
#[cfg(not(unix))]
pub fn discard_pending() -> bool {
    false
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_sigpipe_raised_on_a_blocking_thread_stays_pending_there_until_discarded() {
        std::thread::spawn(|| {
            block_on_this_thread().expect("block");
            assert!(!discard_pending(), "nothing pending yet");
            // SAFETY: raising a signal on the calling thread; it is blocked there, so it stays
            // pending and the test process is not touched.
            let rc = unsafe { libc::pthread_kill(libc::pthread_self(), libc::SIGPIPE) };
            assert_eq!(rc, 0);
            assert!(discard_pending(), "the raised SIGPIPE was pending");
            assert!(!discard_pending(), "and is gone once discarded");
        })
        .join()
        .expect("the thread ends normally");
    }
}
