"""Evaluations and benchmarks: question sets, gold answers, graph generators and timing runs."""
