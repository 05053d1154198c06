#version 330 core
in float v_alpha;
out vec4 frag_colour;

uniform vec4 u_colour;

void main ()
{
  frag_colour = vec4 (u_colour.rgb, u_colour.a * v_alpha);
}
