"""Running one app as N workers behind haproxy or nginx: ``app.py``, ``haproxy.cfg``, ``nginx.conf``."""
