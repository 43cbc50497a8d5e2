# Sources of lib/plot: charts as inline SVG (scales, ticks, palette, escaping) and the
# self-contained HTML page they sit in. Uses core only.
sia_module(plot
  plot/scale.cpp
  plot/svg.cpp
  plot/chart.cpp
  plot/page.cpp
)
target_link_libraries(sia_plot PRIVATE sia_core sia_os)
