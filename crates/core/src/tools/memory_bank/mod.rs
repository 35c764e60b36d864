//! Memory bank tools (context family): rules, core files, documents, search, branches.

pub mod get_recent_branches;
pub mod list_memory_bank_documents;
pub mod read_branch_core_files;
pub mod read_branch_memory_bank;
pub mod read_context;
pub mod read_document;
pub mod read_global_core_files;
pub mod read_global_memory_bank;
pub mod read_rules;
pub mod search_documents_by_tags;
pub mod write_branch_memory_bank;
pub mod write_document;
pub mod write_global_memory_bank;
