"""Formulation adapters over the QP core (LIBSVM's solve_c_svc & co.): build p, y, bounds, call
the one SMO loop, and hand back LIBSVM-shaped results."""
