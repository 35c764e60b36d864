-- The version of the Lua side; the native library must have been built from the same version.
-- Kept equal to Cargo.toml's workspace version (a Rust test checks it).
return "0.1.0"
