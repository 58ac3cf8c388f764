"""Transports: how blocks move between devices (XLA collectives; MPI later)."""
