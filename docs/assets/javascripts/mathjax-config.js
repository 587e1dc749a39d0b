// MathJax configuration for pymdownx.arithmatex in generic mode (mkdocs.yml): arithmatex wraps each
// formula in an element of class "arithmatex", delimited by \( \) inline and \[ \] displayed, and
// MathJax typesets those elements only, so a "$" or a backslash elsewhere on a page is left alone.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true,
    tags: "none",
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex",
  },
};
