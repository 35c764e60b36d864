//! WRAP decision tools (context family): define the issue, register options, tripwires, status.

pub mod define_issue;
pub mod get_current_status;
pub mod make_tripwire;
pub mod register_options;
pub mod reset;
