//! hal0's exit codes, in one place: what each number means (the legend `hal0 --help` and
//! every man page print), the code of an error by its kind, and the codes of a run's end.

/// Done as asked.
pub const OK: i32 = 0;
/// Something failed (the error names it).
pub const FAILURE: i32 = 1;
/// The command line or an input value is wrong (usage).
pub const USAGE: i32 = 2;
/// A person (or `--yes` missing without a terminal) declined; a run was cancelled.
pub const DECLINED: i32 = 3;
/// A key was refused, or lacks the scope.
pub const AUTH: i32 = 4;
/// A run ended failed (or was interrupted on the box).
pub const RUN_FAILED: i32 = 5;
/// A run did not end within `--timeout`.
pub const RUN_TIMED_OUT: i32 = 6;
/// `hal0 activity verify`: the audit log does not match its hash chain (edited outside hal0).
pub const TAMPERED: i32 = 7;
/// Interrupted with Ctrl-C (128 + SIGINT), as shells report it.
pub const INTERRUPTED: i32 = 130;
/// stdout was closed early (`| head`): 128 + SIGPIPE, as a piped Unix tool ends.
pub const CLOSED_PIPE: i32 = 141;

/// The legend printed under `hal0 --help` and in every man page's EXIT STATUS.
pub const LEGEND: &str = "Exit codes: 0 ok, 1 failure, 2 usage or invalid input, 3 declined (a run: cancelled), \
                          4 auth, 5 a run failed, 6 a run timed out, 7 the audit log failed verification.";

/// The exit code of an error of `kind`.
pub fn of(kind: &crate::base::error::Kind) -> i32 {
    use crate::base::error::Kind;
    match kind {
        Kind::Invalid | Kind::Unprocessable | Kind::UnsupportedMedia | Kind::TooLarge => USAGE,
        Kind::Declined => DECLINED,
        Kind::Unauthorized | Kind::Forbidden => AUTH,
        _ => FAILURE,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_legend_names_every_code_a_command_ends_with() {
        for (code, words) in [
            (super::OK, "ok"),
            (super::FAILURE, "failure"),
            (super::USAGE, "usage"),
            (super::DECLINED, "declined"),
            (super::AUTH, "auth"),
            (super::RUN_FAILED, "a run failed"),
            (super::RUN_TIMED_OUT, "a run timed out"),
            (super::TAMPERED, "the audit log failed verification"),
        ] {
            assert!(super::LEGEND.contains(&format!("{code} {words}")), "{code} {words}");
        }
    }
}
