"""Shared pytest set-up."""


def pytest_collection_modifyitems(session, config, items):
    """tests/test_book.py builds the book from the quick run that tests/test_notebooks.py executes: run it last."""
    items.sort(key=lambda item: item.path.name == "test_book.py")
