"""The server side of the dashboard: cache and stores, background jobs and their start,
Celery and its fan-out, lost-job signals, time and memory guards, limits, hygiene, upload
retention.

It imports no page and nothing of :mod:`pages._framework` (the layer above); the leading
underscore keeps Dash from loading this folder as pages.
"""
