"""The public testing kit: hypothesis strategies and checks for solvers and plugins."""
