//! Workspace tools: the project root and its files (fs-*), project info, workspace folders.

pub mod fs_get_project_info;
pub mod fs_list_directory;
pub mod fs_read_file;
pub mod fs_set_project_root;
pub mod fs_write_file;
pub mod get_workspace_folders;
