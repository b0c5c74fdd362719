//! The `hal0` binary: everything lives in the library; this only exits with its code.

fn main() {
    std::process::exit(hal0::cli::main());
}
