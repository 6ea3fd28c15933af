//! Holds no code: the tests in `tests/` check the workspace's layout.
