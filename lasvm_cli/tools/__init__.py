"""Tools over training and data: grid search, svm-scale, plots, data sets.
"""
