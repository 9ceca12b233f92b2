"""Data in and out: reading CSV uploads safely (``csvfile``), typing and binning a table into a
:class:`~varimp_core.data.table.DiscreteTable` or sklearn-ready arrays (``prepare``), and the
discrete joint distribution itself (``table``)."""
