"""Outputs for people: Allure results, the terminal verdict table (``summary``), the one-page
summary per drive, charts, and the HTML report (``html``)."""
