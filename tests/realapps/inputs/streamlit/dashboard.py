"""The Streamlit dashboard of tests/realapps: a day's orders of a small shop, filtered with widgets."""

import streamlit as st

ORDERS = [
    {"id": 1001, "customer": "Ana", "city": "Lisbon", "amount": 120, "status": "shipped"},
    {"id": 1002, "customer": "Bruno", "city": "Lisbon", "amount": 45, "status": "cancelled"},
    {"id": 1003, "customer": "Ingrid", "city": "Oslo", "amount": 310, "status": "shipped"},
    {"id": 1004, "customer": "Lars", "city": "Oslo", "amount": 75, "status": "pending"},
    {"id": 1005, "customer": "Kari", "city": "Oslo", "amount": 220, "status": "cancelled"},
    {"id": 1006, "customer": "Yuki", "city": "Tokyo", "amount": 480, "status": "shipped"},
    {"id": 1007, "customer": "Haruto", "city": "Tokyo", "amount": 95, "status": "pending"},
    {"id": 1008, "customer": "Sofia", "city": "Lisbon", "amount": 160, "status": "shipped"},
]

st.set_page_config(page_title="Orders dashboard")
st.title("Orders dashboard")

name = st.text_input("Your name")
if name:
    st.write(f"Hello, {name}! Here are today's orders.")

city = st.selectbox("City", ["All cities", "Lisbon", "Oslo", "Tokyo"])
minimum = st.number_input("Minimum amount (€)", min_value=0, max_value=500, value=0, step=50)
cancelled = st.checkbox("Include cancelled orders")

rows = [
    o
    for o in ORDERS
    if (city == "All cities" or o["city"] == city)
    and o["amount"] >= minimum
    and (cancelled or o["status"] != "cancelled")
]

left, right = st.columns(2)
left.metric("Orders", len(rows))
right.metric("Revenue", f"€{sum(o['amount'] for o in rows)}")

orders_tab, summary_tab = st.tabs(["Orders", "Summary"])
with orders_tab:
    for o in rows:
        st.markdown(f"- Order {o['id']}: {o['customer']} ({o['city']}), €{o['amount']}, {o['status']}")
with summary_tab:
    for status in ("shipped", "pending", "cancelled"):
        count = sum(1 for o in rows if o["status"] == status)
        st.write(f"{status.capitalize()}: {count}")

with st.sidebar:
    st.header("Export")
    if st.button("Export orders"):
        st.success(f"Exported {len(rows)} orders to orders.csv")
