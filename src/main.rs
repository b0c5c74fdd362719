//! The `hal0` binary: everything lives in the library; this only exits with its code.

/// mimalloc instead of glibc malloc: the request path allocates many small JSON values, and
/// glibc's free-list upkeep (consolidate, unlink) showed up at ~8% of the daemon's CPU.
/// Built with `no_thp`: mimalloc otherwise asks for transparent huge pages on its eagerly
/// committed arena, which put 10 MiB of 2 MiB pages in an idle daemon's RSS (idle 28 → 20
/// MiB, peak under the relay bench 49 → 36 MiB, same throughput).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // `hal0 … | head` closes stdout early: end quietly as a piped Unix tool does (exit 141,
    // SIGPIPE's code) instead of a panic report about the broken pipe.
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(hal0::base::exit::CLOSED_PIPE);
        }
        default(info);
    }));
    std::process::exit(hal0::cli::main());
}
