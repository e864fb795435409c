"""Outputs for people: Allure results, the terminal verdict table (``summary``), the one-page
summary per drive, charts, the HTML report (``html``), and a stored run judged again
(``rejudge``)."""
