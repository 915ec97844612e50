"""The data and its time: the table contracts, readers of users' files and datasets, the
forward split, visibility.
"""
