"""The svm_train layer: parameters, the trainers (one-vs-one, one-vs-rest, all-in-one, single
machine), cross-validation, the driver and its run controls (online runs, tracking runs),
distributed tasks.
"""
