"""Which header heads which column, on layouts that came out wrong: a tall header set close to
its neighbour grazing the neighbour's territory, a spanning header centred over more columns
than it reaches, a date centred over its pair of columns. Each PDF is generated cell by cell,
the way filings print tables."""

from __future__ import annotations

from pathlib import Path

from pdf_layout import Placed, text_width, write_positioned_pdf
from test_pdf_tables import LEFT, centred, row, rows_of

from deepresearch.providers.documents.extract import extract_path


def page_rows(tmp_path: Path, page: list[Placed]) -> dict[str, str]:
    return rows_of(extract_path(write_positioned_pdf(tmp_path / "t.pdf", [page])).pages[0])


def _repurchases() -> list[Placed]:
    """Headers of 3, 6 and 4 lines, bottom-aligned, each centred over its column; the third
    column's header is wider than its figures and reaches into the second column's territory."""
    r = [300.0, 380.0, 460.0, 585.0]
    middles = [285.0, 358.0, 440.0, 548.0]
    page: list[Placed] = [(LEFT, 780, "Share repurchase activity was as follows (in millions):")]
    stacks = [
        ["Total Number", "of Shares", "Purchased"],
        ["Average Price", "Paid Per", "Share"],
        [
            "Total Number of",
            "Shares",
            "Purchased as Part",
            "of Publicly",
            "Announced Plans or",
            "Programs",
        ],
        ["Approximate Dollar", "Value of Shares That", "May Yet Be Purchased", "Under the Plans"],
    ]
    for middle, stack in zip(middles, stacks, strict=True):
        for depth, text in enumerate(reversed(stack)):
            page.append(centred(middle, 706 + 9 * depth, text))
    page.append((LEFT, 706, "Periods"))
    page += row(690, "April 2023", ["38,121", "$ 165.46", "38,121", ""][:3], r[:3])
    page += row(678, "May 2023", ["21,876", "174.91", "21,876"], r[:3])
    page += row(666, "June 2023", ["42,676", "184.34", "42,676", "$ 94,569"], r)
    return page


def test_a_wide_header_grazing_its_neighbour_heads_only_its_own_column(tmp_path: Path) -> None:
    rows = page_rows(tmp_path, _repurchases())
    assert rows["June 2023"].endswith(
        "June 2023: Total Number of Shares Purchased = 42,676; "
        "Average Price Paid Per Share = 184.34; "
        "Total Number of Shares Purchased as Part of Publicly Announced Plans or Programs "
        "= 42,676; Approximate Dollar Value of Shares That May Yet Be Purchased Under the "
        "Plans = 94,569"
    )


def _commitments() -> list[Placed]:
    """A stub period over the first column; "Year Ended December 31," centred over the next
    four year columns though it reaches over the middle two only; years under it."""
    r = [240.0, 310.0, 370.0, 430.0, 490.0, 560.0, 605.0]
    page: list[Placed] = [
        (LEFT, 780, "Our principal contractual commitments were as follows (in millions):")
    ]
    page += [centred(r[0] - 25, 766, "Three Months"), centred(r[0] - 25, 757, "Ended December")]
    page.append(centred(r[0] - 25, 748, "31,"))
    page.append(centred((r[1] - 36 + r[4]) / 2, 748, "Year Ended December 31,"))
    for right, text in zip(
        r, ["2023", "2024", "2025", "2026", "2027", "Thereafter", "Total"], strict=True
    ):
        page.append((right - text_width(text), 736, text))
    page += row(
        722,
        "Long-term debt",
        ["$ 810", "$ 10,637", "$ 7,326", "$ 5,015", "$ 10,399", "$ 63,814", "$ 98,001"],
        r,
        dollar=36,
    )
    page += row(
        710,
        "Operating leases",
        ["3,245", "9,977", "9,390", "8,678", "7,879", "49,645", "88,814"],
        r,
    )
    return page


def test_a_period_centred_over_more_columns_than_it_reaches_heads_them_all(
    tmp_path: Path,
) -> None:
    rows = page_rows(tmp_path, _commitments())
    assert rows["Operating leases"].endswith(
        "Operating leases: Three Months Ended December 31, 2023 = 3,245; "
        "Year Ended December 31, 2024 = 9,977; Year Ended December 31, 2025 = 9,390; "
        "Year Ended December 31, 2026 = 8,678; Year Ended December 31, 2027 = 7,879; "
        "Thereafter = 49,645; Total = 88,814"
    )


def _results() -> list[Placed]:
    """A period centred over the four columns, each date centred over its "Amount" and "% of
    Net Revenue" pair, reaching over the first of them only."""
    r = [360.0, 445.0, 505.0, 590.0]
    pairs = [(r[0] - 70 + r[1]) / 2, (r[2] - 27 + r[3]) / 2]  # a "$" 70 points left of 11,715
    page: list[Placed] = [(LEFT, 780, "Consolidated Results of Operations")]
    page.append(centred((r[0] - 70 + r[3]) / 2, 764, "Three Months Ended"))
    page += [centred(pairs[0], 752, "Q1 2023"), centred(pairs[1], 752, "Q1 2022")]
    page += [centred(r[1] - 16, 740, "% of Net"), centred(r[3] - 16, 740, "% of Net")]
    page.append((LEFT, 730, "(In Millions)"))
    for right, text in zip(r, ["Amount", "Revenue", "Amount", "Revenue"], strict=True):
        page.append(centred(right - 16, 730, text))
    page += row(716, "Net revenue", ["$ 11,715", "100.0 %", "18,353", "100.0 %"], r, dollar=70)
    page += row(704, "Cost of sales", ["7,707", "65.8 %", "9,109", "49.6 %"], r)
    return page


def test_a_date_centred_over_its_pair_of_columns_heads_both(tmp_path: Path) -> None:
    rows = page_rows(tmp_path, _results())
    assert rows["Cost of sales"] == (
        "Consolidated Results of Operations (in millions): Cost of sales: "
        "Three Months Ended Q1 2023 Amount = 7,707; "
        "Three Months Ended Q1 2023 % of Net Revenue = 65.8 %; "
        "Three Months Ended Q1 2022 Amount = 9,109; "
        "Three Months Ended Q1 2022 % of Net Revenue = 49.6 %"
    )


def test_a_row_with_a_blank_percentage_is_a_row_not_a_header(tmp_path: Path) -> None:
    """ "— %" (no figure in a "%" column) is a value: the row it ends is a data row, not a
    header over the rows below it."""
    page = _results()
    label = "Less: Net income attributable to non-controlling interests"
    page += row(692, label, ["(10)", "(0.1) %", "—", "— %"], [360.0, 445.0, 505.0, 590.0])
    page += row(
        680,
        "Net income attributable to Intel",
        ["(2,758)", "(23.5) %", "8,113", "44.2 %"],
        [360.0, 445.0, 505.0, 590.0],
    )
    rows = page_rows(tmp_path, page)
    assert rows["Net income attributable to Intel"].endswith(
        "Net income attributable to Intel: Three Months Ended Q1 2023 Amount = (2,758); "
        "Three Months Ended Q1 2023 % of Net Revenue = (23.5) %; "
        "Three Months Ended Q1 2022 Amount = 8,113; "
        "Three Months Ended Q1 2022 % of Net Revenue = 44.2 %"
    )
    assert rows["Less - Net income attributable to non-controlling interests"].endswith(
        "Three Months Ended Q1 2022 Amount = —; Three Months Ended Q1 2022 % of Net Revenue = — %"
    )


def test_dates_under_the_headers_head_their_group(tmp_path: Path) -> None:
    """A date line under the column headers, each date right-aligned over the last column
    of its group ("March 31, 2023" over "Derivative Assets  Derivative Liabilities")."""
    r = [370.0, 440.0, 505.0, 572.0]
    page: list[Placed] = [(LEFT, 780, "The following table presents our derivative instruments:")]
    page += right_texts(r, 766, ["Derivative"] * 4)
    page += right_texts(r, 758, ["Assets", "Liabilities", "Assets", "Liabilities"])
    page.append((LEFT, 758, "(In millions)"))
    page += right_texts([r[1], r[3]], 744, ["March 31,", "June 30,"])
    page += right_texts([r[1], r[3]], 736, ["2023", "2022"])
    page += row(722, "Foreign exchange contracts", ["$ 19", "$ (77)", "$ 0", "$ (77)"], r)
    page += row(710, "Interest rate contracts", ["6", "0", "3", "0"], r)
    assert page_rows(tmp_path, page)["Interest rate contracts"].endswith(
        "Interest rate contracts: Derivative Assets March 31, 2023 = 6; "
        "Derivative Liabilities March 31, 2023 = 0; Derivative Assets June 30, 2022 = 3; "
        "Derivative Liabilities June 30, 2022 = 0"
    )


def test_a_date_over_its_own_column_heads_no_column_with_a_header_of_its_own(
    tmp_path: Path,
) -> None:
    """ "June 30," right-aligned over "2022", "March 31," over "2023": "Acquisitions" and
    "Other" between them are no dates' columns."""
    r = [353.0, 427.0, 500.0, 572.0]
    page: list[Placed] = [
        (LEFT, 780, "Changes in the carrying amount of goodwill were as follows:")
    ]
    page += right_texts([r[0], r[3]], 766, ["June 30,", "March 31,"])
    page += right_texts(r, 758, ["2022", "Acquisitions", "Other", "2023"])
    page.append((LEFT, 758, "(In millions)"))
    page += row(744, "Intelligent Cloud", ["$ 30,182", "$ 223", "$ 87", "$ 30,492"], r)
    page += row(732, "More Personal Computing", ["12,531", "0", "122", "12,653"], r)
    assert page_rows(tmp_path, page)["More Personal Computing"].endswith(
        "More Personal Computing: June 30, 2022 = 12,531; Acquisitions = 0; Other = 122; "
        "March 31, 2023 = 12,653"
    )


def right_texts(rights: list[float], y: float, texts: list[str]) -> list[Placed]:
    return [(r - text_width(t), y, t) for r, t in zip(rights, texts, strict=True)]


def test_a_date_centred_over_a_wider_group_than_it_reaches_heads_the_group(
    tmp_path: Path,
) -> None:
    """One date centred over a single column, the next centred over four columns though it
    reaches over the middle two only: the four are its columns, none is the first date's."""
    r = [290.0, 365.0, 440.0, 515.0, 590.0]
    page: list[Placed] = [(LEFT, 780, "Our marketable securities are as follows (in millions):")]
    page.append(centred(r[0] - 34, 766, "December 31, 2022"))
    page.append(centred((r[1] - 55 + r[4]) / 2, 766, "September 30, 2023"))
    page += right_texts(r, 754, ["Fair Value", "Cost", "Gains", "Losses", "Fair Value"])
    money = ["$ 27,899", "$ 20,424", "$ —", "$ —", "$ 20,424"]
    page += row(740, "Money market funds", money, r, dollar=55)
    page += row(728, "Corporate debt", ["22,627", "24,542", "—", "(287)", "24,255"], r)
    assert page_rows(tmp_path, page)["Corporate debt"].endswith(
        "Corporate debt: December 31, 2022 Fair Value = 22,627; "
        "September 30, 2023 Cost = 24,542; September 30, 2023 Gains = —; "
        "September 30, 2023 Losses = (287); September 30, 2023 Fair Value = 24,255"
    )


def test_a_header_over_an_inner_text_column_heads_no_figures(tmp_path: Path) -> None:
    """ "Fair Value Level" over the "Level 2" words between the labels and the figures is the
    labels' column: "Adjusted Cost Basis" keeps its own header."""
    r = [290.0, 370.0]
    page: list[Placed] = [(LEFT, 780, "The components of investments were as follows:")]
    page += [centred(190, 766, "Fair Value"), centred(190, 757, "Level")]
    page += right_texts(r, 766, ["Adjusted", "Recorded"])
    page += right_texts(r, 757, ["Cost Basis", "Basis"])
    page += row(743, "Commercial paper", ["$ 16,589", "$ 16,589"], r)
    page.append((175, 743, "Level 2"))
    page += row(731, "Certificates of deposit", ["2,701", "2,701"], r)
    page.append((175, 731, "Level 2"))
    assert page_rows(tmp_path, page)["Certificates of deposit Level 2"].endswith(
        "Certificates of deposit Level 2: Adjusted Cost Basis = 2,701; Recorded Basis = 2,701"
    )


def _summary() -> list[Placed]:
    """A quarter's summary: "Three Months Ended" over three date columns, the middle date's year
    on a line of its own (so "January 29," sits a line higher, centred under the span), then
    two change columns whose two-line headers are wider than their figures: "Quarter-over-
    Quarter" reaches into the third date column's territory, and happens to sit centred over
    "May 1, 2022" and the last "Change"."""
    r = [247.0, 321.0, 395.0, 500.0, 593.0]
    page: list[Placed] = [(LEFT, 780, "First Quarter Summary")]
    page.append(centred(288.0, 760, "Three Months Ended"))
    dates = [centred(214.0, 742, "April 30, 2023"), centred(288.0, 742, "2023")]
    may = (338.0, 742.0, "May 1, 2022")
    last_change = centred(550.0, 742, "Change")
    # centred over "May 1, 2022" .. the last "Change", ending over its own column
    middle = (may[0] + last_change[0] + text_width("Change")) / 2
    page += [*dates, may, centred(middle - 0.5, 742, "Change"), last_change]
    page += [centred(288.0, 751, "January 29,"), centred(middle, 751, "Quarter-over-Quarter")]
    page.append(centred(550.0, 751, "Year-over-Year"))
    page += row(716, "Revenue", ["$ 7,192", "$ 6,051", "$ 8,288", "19 %", "(13)%"], r)
    page += row(704, "Operating expenses", ["2,508", "2,576", "3,563", "(3)%", "(30)%"], r)
    return page


def test_a_change_header_wider_than_its_figures_heads_no_date_column(tmp_path: Path) -> None:
    """Neither "Quarter-over-Quarter" nor "January 29," reaches the date columns beside them:
    each date column keeps its own date under the span's period."""
    rows = page_rows(tmp_path, _summary())
    assert rows["Operating expenses"].endswith(
        "Operating expenses: Three Months Ended April 30, 2023 = 2,508; Three Months Ended "
        "January 29, 2023 = 2,576; Three Months Ended May 1, 2022 = 3,563; Quarter-over-Quarter "
        "Change = (3)%; Year-over-Year Change = (30)%"
    ), rows["Operating expenses"]
