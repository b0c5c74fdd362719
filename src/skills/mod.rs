//! Skills: the `SKILL.md` directories Hermes loads, and the rules of the bridge's skill
//! tools (`agent_skills_list`, `agent_skill_get`, `agent_skill_put`, `agent_skill_delete`).
//!
//! - [`validate`]: the push check [`validate_push`] that refuses an unreviewable, invalid,
//!   secret-bearing or invisible-character push with `bridge.skill_invalid` (422) before
//!   anything is queued.
//! - [`store`]: [`SkillDirs`], the shipped (read-only) and drop-in (writable) directories:
//!   list, get, and the approved write or delete, swapped in atomically.
//! - [`mod@card`]: the inbox card the operator approves ([`card()`]) and the push [`digest`]
//!   used to tell "same content" apart.
//!
//! The queueing itself (one pending content per skill, per-client rows, the limit of eight)
//! belongs to the bridge and the approvals inbox; this module holds no state.

pub mod card;
mod frontmatter;
mod secrets;
pub mod store;
pub mod validate;
#[cfg(test)]
mod validate_props;

pub use card::{card, digest};
pub use store::SkillDirs;
pub use validate::{valid_name, validate_push};
