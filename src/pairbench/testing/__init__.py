"""Test doubles that ship with pairbench (fakes are product): a local Chat Completions
server and fake ``claude`` / ``codex`` executables speaking the real formats."""
